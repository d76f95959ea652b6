// The libFuzzer entry point of the 'response-head' target; the body is in Tests/TransferCoreTests/FuzzTargets.swift.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.responseHead(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
