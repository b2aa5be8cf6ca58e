// `import Settee` is all a user writes: the value types (JSON, Document, SetteeError,
// FindQuery, Selector, …) live in SetteeCore, which has no SQLite in it, and come along.
@_exported import SetteeCore
