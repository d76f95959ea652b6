import Crypto

extension SHA256.Digest {
    /// The digest as 64 lowercase hexadecimal digits, as `sha256sum` prints it.
    public var hexDigest: String {
        map { byte in byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
    }
}
