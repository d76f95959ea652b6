// The libFuzzer entry point of the 'state-file' target; the body is in Tests/TaskStateTests/FuzzTargets.swift.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    StateFuzzTargets.stateFile(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
