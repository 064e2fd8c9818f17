// A counting preload for the fault sweep (Tests/ReckonCLITests/FaultSweepTests.swift).
// It has no API: loaded with LD_PRELOAD it wraps the C library's file-system calls.
