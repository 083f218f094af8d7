import VaultRemote

extension JSONOutput {
    /// One remote of `remote list --json`.
    struct Remote: Encodable {
        let name: String
        let target: String
        let generation: UInt64
        /// "append-only" or "can-delete": what `remote add` learned this
        /// machine may do there; absent when not known.
        let rights: String?
        init(_ r: RemoteConfig.Remote, rights: RemoteRights?) {
            (name, target, generation, self.rights) = (r.name, r.target, r.known, rights?.rawValue)
        }
    }

    /// `push --json`, `pull --json`, `clone --json`.
    struct Transfer: Encodable {
        let remote: String
        let generation: UInt64
        let files: Int
        let bytes: UInt64
        let deleted: Int
        let dropIns: Int
        let seconds: Double
        let state: String
        /// How many conflicts a merge kept (only after a merge).
        var conflicts: Int? = nil
        /// This vault's drop-ins a push sent to the remote's inbox (push only).
        var dropInsSent: Int? = nil
        enum CodingKeys: String, CodingKey {
            case remote, generation, files, bytes, deleted, dropIns = "drop_ins", seconds, state, conflicts,
                 dropInsSent = "drop_ins_sent"
        }
    }
}
