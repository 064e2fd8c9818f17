import Foundation

/// How the app's Core Data model names what reckon reads, for an app
/// version that renamed something (`"model"` in a definition).
package struct StoreModel: Sendable, Hashable {
    /// The memo entity's name in `Z_PRIMARYKEY`.
    package var entity = "Memo"
    /// The app's attribute name for each of reckon's (`modifiedAt` → `updatedAt`).
    package var attributes: [String: String] = [:]
    /// The entity a to-many `tags` relationship leads to, and its attribute holding the tag.
    package var tagEntity = "Tag"
    package var tagAttribute = "name"

    package init() {}

    /// The keys of a store side's `"model"`.
    package static let keys: Set<String> = ["entity", "attributes", "tagEntity", "tagAttribute"]

    /// reckon's fields, by the names `attributes` gives the app's names for.
    package static var fieldNames: [String] { StoreSchema.Field.allCases.map(\.rawValue) }

    /// The app's name for one of reckon's attributes.
    func name(of field: StoreSchema.Field) -> String { attributes[field.rawValue] ?? field.rawValue }
}

extension DefinitionReader {
    /// A store's `"model"`: the entity's name and the app's names for reckon's attributes.
    func storeModel(_ value: JSONValue, _ key: String) throws(DefinitionError) -> StoreModel {
        let object = try object(value, key, allowed: StoreModel.keys)
        var model = StoreModel()
        model.entity = try string(object, "entity", in: key, required: false) ?? model.entity
        model.tagEntity = try string(object, "tagEntity", in: key, required: false) ?? model.tagEntity
        model.tagAttribute = try string(object, "tagAttribute", in: key, required: false) ?? model.tagAttribute
        if let attributes = object["attributes"] {
            let known = Set(StoreModel.fieldNames)
            let names = try self.object(attributes, "\(key).attributes", allowed: known)
            for field in names.keys.sorted() {
                let name = try string(names, field, in: "\(key).attributes", required: true)!
                guard name.wholeMatch(of: /[A-Za-z][A-Za-z0-9_]*/) != nil else {
                    throw fail(
                        "\(key).attributes.\(field)", "must be an attribute's name (a letter, then letters, digits or '_'), found \(quoted(name))")
                }
                model.attributes[field] = name
            }
        }
        return model
    }
}

/// Where a Core Data store keeps the memo entity: its table, the entity
/// numbers of the memo and its sub-entities, and the column of each field.
/// Read from the store itself (`Z_PRIMARYKEY`, `PRAGMA table_info`), so
/// nothing is assumed about numbers that change between app versions.
struct StoreSchema: Sendable {
    /// The fields reckon reads, named as in a memo file.
    enum Field: String, CaseIterable, Sendable {
        case id, title, body, createdAt, modifiedAt, archivedAt, deletedAt, tags, pinned, changeTag

        /// The field's place in `allCases`, which is its column's place in `select`.
        var place: Int {
            switch self {
            case .id: 0
            case .title: 1
            case .body: 2
            case .createdAt: 3
            case .modifiedAt: 4
            case .archivedAt: 5
            case .deletedAt: 6
            case .tags: 7
            case .pinned: 8
            case .changeTag: 9
            }
        }

        /// Without these a store cannot be counted or compared.
        var isRequired: Bool { [.id, .modifiedAt, .archivedAt, .deletedAt].contains(self) }
    }

    /// The to-many relationship's join table, and the tag entity's table.
    struct TagJoin: Sendable {
        var table: String
        var memoColumn: String
        var tagColumn: String
        var tagTable: String
        var nameColumn: String
    }

    var entity: String
    var table: String
    /// `Z_ENT` of the entity and its sub-entities.
    var entityNumbers: [Int64]
    /// `Z_ENT` of every entity whose rows the table holds; a row with any other is a problem.
    var tableEntityNumbers: [Int64]
    var columns: [Field: String]
    /// `Z_OPT`, Core Data's row version, when the table has it.
    var rowVersionColumn: String?
    var tagJoin: TagJoin?
    /// What could not be found and is read as absent.
    var notes: [String]

    /// Why a store's model cannot be read: one sentence naming the entity and what is missing.
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Reads the memo entity's layout from a store.
    static func read(_ db: SQLite, model: StoreModel) throws -> StoreSchema {
        let tables = Set(try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap(\.first?.text))
        guard tables.contains("Z_PRIMARYKEY") else {
            throw Failure(message: "is not a Core Data store: it has no Z_PRIMARYKEY table")
        }
        let entities = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY").compactMap { row -> (Int64, String, Int64)? in
            guard row.count == 3, let number = row[0].integer, let name = row[1].text else { return nil }
            return (number, name, row[2].integer ?? 0)
        }
        let byNumber = Dictionary(entities.map { ($0.0, $0) }, uniquingKeysWith: { first, _ in first })
        let children = Dictionary(grouping: entities, by: \.2).mapValues { $0.map(\.0) }
        /// An entity and every entity below it, each once.
        func descendants(of number: Int64) -> [Int64] {
            var found: Set<Int64> = [number]
            var next = [number]
            while let parent = next.popLast() {
                for child in children[parent] ?? [] where found.insert(child).inserted { next.append(child) }
            }
            return found.sorted()
        }
        /// The table of an entity (its root entity's) and the numbers of the
        /// entity with its sub-entities, and of every entity in that table.
        func family(of name: String) throws -> (table: String, numbers: [Int64], inTable: [Int64]) {
            guard let entity = entities.first(where: { $0.1 == name }) else {
                let known = entities.map(\.1).sorted().joined(separator: ", ")
                throw Failure(
                    message:
                        "has no entity named \(name) (it has \(known.isEmpty ? "none" : known)); name the app's entity with \"model\": {\"entity\": …}"
                )
            }
            var root = entity
            var seen: Set<Int64> = []
            while root.2 != 0, seen.insert(root.0).inserted, let parent = byNumber[root.2] { root = parent }
            let table = "Z" + root.1.uppercased()
            guard tables.contains(table) else { throw Failure(message: "has no table \(table) for the entity \(name)") }
            return (table, descendants(of: entity.0), descendants(of: root.0))
        }

        let (table, numbers, inTable) = try family(of: model.entity)
        let names = try columnNames(of: table, in: db)
        guard names.contains("Z_PK"), names.contains("Z_ENT") else {
            throw Failure(message: "the table \(table) of the entity \(model.entity) has no Z_PK or Z_ENT column, so it is not Core Data's")
        }
        var schema = StoreSchema(
            entity: model.entity, table: table, entityNumbers: numbers, tableEntityNumbers: inTable, columns: [:],
            rowVersionColumn: names.contains("Z_OPT") ? "Z_OPT" : nil, tagJoin: nil, notes: [])
        for field in Field.allCases {
            let attribute = model.name(of: field)
            switch column(for: attribute, in: names) {
            case .found(let column): schema.columns[field] = column
            case .missing(let looked) where field == .tags:
                if let join = try tagJoin(model: model, memoNumbers: numbers, tables: tables, db: db, family: family) {
                    schema.tagJoin = join
                } else {
                    schema.notes.append(
                        "the entity \(model.entity) has no column \(looked) and no to-many relationship to \(model.tagEntity); its memos are read without tags"
                    )
                }
            case .missing(let looked) where field.isRequired:
                throw Failure(
                    message:
                        "the entity \(model.entity) (table \(table)) has no column \(looked) for \(attribute)\(attribute == field.rawValue ? "" : " (reckon's \(field.rawValue))"); if the app renamed it, map it in the definition's \"model\": {\"attributes\": …}"
                )
            case .missing(let looked):
                schema.notes.append("the entity \(model.entity) has no column \(looked) for \(attribute); it is read as absent")
            case .ambiguous(let candidates) where field.isRequired:
                throw Failure(
                    message:
                        "the entity \(model.entity) (table \(table)) has several columns that could hold \(attribute): \(candidates.joined(separator: ", "))"
                )
            case .ambiguous(let candidates):
                schema.notes.append(
                    "the entity \(model.entity) has several columns that could hold \(attribute) (\(candidates.joined(separator: ", "))); it is read as absent"
                )
            }
        }
        if schema.rowVersionColumn == nil { schema.notes.append("the table \(table) has no Z_OPT column; rows carry no version") }
        return schema
    }

    enum ColumnMatch {
        case found(String)
        case missing(String)
        case ambiguous([String])
    }

    /// `Z` plus the attribute in capitals, or that name with a number after it
    /// (Core Data numbers names that collide within one table).
    static func column(for attribute: String, in names: [String]) -> ColumnMatch {
        let wanted = "Z" + attribute.uppercased()
        if names.contains(wanted) { return .found(wanted) }
        let numbered = names.filter { name in
            name.hasPrefix(wanted) && name.count > wanted.count && name.dropFirst(wanted.count).allSatisfy(\.isASCIIDigit)
        }
        switch numbered.count {
        case 0: return .missing(wanted)
        case 1: return .found(numbered[0])
        default: return .ambiguous(numbered.sorted())
        }
    }

    static func columnNames(of table: String, in db: SQLite) throws -> [String] {
        try db.rows("PRAGMA table_info(\(quoted(table)))").compactMap { $0.count > 1 ? $0[1].text : nil }
    }

    /// Finds a many-to-many `tags` relationship: a join table `Z_<n>TAGS`
    /// with one column for a memo entity number (`Z_<n>…`) and one for a tag
    /// entity number, and the tag entity's name column.
    static func tagJoin(
        model: StoreModel, memoNumbers: [Int64], tables: Set<String>, db: SQLite,
        family: (String) throws -> (table: String, numbers: [Int64], inTable: [Int64])
    ) throws -> TagJoin? {
        guard let tag = try? family(model.tagEntity) else { return nil }
        let tagNames = try columnNames(of: tag.table, in: db)
        guard case .found(let nameColumn) = column(for: model.tagAttribute, in: tagNames) else { return nil }
        let relationship = model.name(of: .tags).uppercased()
        func entityNumber(_ column: String) -> Int64? {
            guard column.hasPrefix("Z_") else { return nil }
            return Int64(column.dropFirst(2).prefix(while: \.isASCIIDigit))
        }
        for table in tables.sorted() where table.hasPrefix("Z_") && table.hasSuffix(relationship) {
            let middle = table.dropFirst(2).dropLast(relationship.count)
            guard !middle.isEmpty, middle.allSatisfy(\.isASCIIDigit) else { continue }
            let columns = try columnNames(of: table, in: db)
            guard let memoColumn = columns.first(where: { entityNumber($0).map(memoNumbers.contains) ?? false }),
                let tagColumn = columns.first(where: { entityNumber($0).map(tag.numbers.contains) ?? false })
            else { continue }
            return TagJoin(table: table, memoColumn: memoColumn, tagColumn: tagColumn, tagTable: tag.table, nameColumn: nameColumn)
        }
        return nil
    }

    /// An SQL identifier in double quotes.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `SELECT` of every field in `Field.allCases` order (NULL for one not
    /// wanted or not in the store), then `Z_PK` and the row version, from
    /// the memo entity's rows.
    /// With `bodyType`, the body's column gives only its type (`typeof`,
    /// which SQLite answers without reading the text) and the row's rowid
    /// follows, for reading the body in pieces (`SQLite.text(table:column:rowid:)`).
    func select(_ wanted: [Field], where condition: String = "", bodyType: Bool = false) -> String {
        func column(_ field: Field) -> String {
            guard wanted.contains(field), let name = columns[field].map(Self.quoted) else { return "NULL" }
            return bodyType && field == .body ? "typeof(\(name))" : name
        }
        let list = Field.allCases.map(column) + ["Z_PK", rowVersionColumn.map(Self.quoted) ?? "NULL"] + (bodyType ? ["_rowid_"] : [])
        let entities = entityNumbers.map(String.init).joined(separator: ", ")
        return "SELECT \(list.joined(separator: ", ")) FROM \(Self.quoted(table)) WHERE Z_ENT IN (\(entities))\(condition)"
    }

    /// The query for one memo's tags through the join table, each link
    /// once; a link to a tag row that is missing gives NULL.
    var tagQuery: String? {
        tagJoin.map { join in
            "SELECT DISTINCT t.\(Self.quoted(join.nameColumn)) FROM \(Self.quoted(join.table)) j LEFT JOIN \(Self.quoted(join.tagTable)) t ON t.Z_PK = j.\(Self.quoted(join.tagColumn)) WHERE j.\(Self.quoted(join.memoColumn)) = ? ORDER BY 1"
        }
    }

    /// The rows of the table whose `Z_ENT` names no entity kept in it.
    var strayRowsQuery: String {
        "SELECT Z_PK, Z_ENT FROM \(Self.quoted(table)) WHERE Z_ENT IS NULL OR Z_ENT NOT IN (\(tableEntityNumbers.map(String.init).joined(separator: ", ")))"
    }
}

extension SQLite.Value {
    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int64? { if case .integer(let number) = self { number } else { nil } }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
