#include <zip.h>
#include <zlib.h>
