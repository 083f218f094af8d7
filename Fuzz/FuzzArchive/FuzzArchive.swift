// libFuzzer target: the folder-restore path on hostile pax input (to be
// filled by the archive work; until then it only accepts the input).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchive(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 { 0 }
