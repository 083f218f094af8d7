public enum VaultCoreVersion { public static let version = "0.1.0" }
