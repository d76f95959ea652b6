// The libFuzzer entry point of the 'entity-tag' target; the body is in Tests/TransferCoreTests/FuzzTargets.swift.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.entityTag(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
