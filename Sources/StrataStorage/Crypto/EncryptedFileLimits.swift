extension Store {
    /// Refuses `operation` on an encrypted file with ``StorageError/invalidArgument(_:)``: the integrity check
    /// reads pages as they are stored, and a copy (compaction, `writeCopy`) would be written unencrypted, so both
    /// wait until they handle sealed pages (issue 26; see Documentation/Encryption.md). Refusing is better than
    /// a report of noise, or a clear-text copy of what the key protects.
    func refuseIfEncrypted(_ operation: String) throws(StorageError) {
        guard shared.metaCodec.isSealed else { return }
        throw .invalidArgument("\(operation) an encrypted file is not supported yet (\(path))")
    }
}
