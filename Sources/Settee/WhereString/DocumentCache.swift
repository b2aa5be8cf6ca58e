import SetteeCore

/// The parsed documents a collection's `where` queries returned last (seed 003's result
/// cache): a query that meets a document whose id and revision it holds skips reading and
/// parsing the body. A revision names one body, so an entry can never be stale; it is
/// only replaced. Least recently used entries go first.
struct DocumentCache {
  private struct Entry {
    var id: String
    var rev: RevisionID
    var document: Document
    var newer: Int
    var older: Int
  }

  /// How many entries it keeps.
  let capacity: Int
  private var slots: [Entry] = []
  private var byID: [String: Int] = [:]
  /// The most and least recently used slots (-1: none).
  private var newest = -1
  private var oldest = -1

  init(capacity: Int) { self.capacity = max(0, capacity) }

  var count: Int { byID.count }

  /// The document cached for `id` at revision `rev`, marked as just used.
  mutating func document(_ id: String, rev: RevisionID) -> Document? {
    guard let slot = byID[id], slots[slot].rev == rev else { return nil }
    touch(slot)
    return slots[slot].document
  }

  mutating func insert(_ document: Document) {
    guard capacity > 0, let rev = document.rev else { return }
    if let slot = byID[document.id] {
      slots[slot].rev = rev
      slots[slot].document = document
      touch(slot)
      return
    }
    let slot: Int
    if slots.count < capacity {
      slot = slots.count
      slots.append(Entry(id: document.id, rev: rev, document: document, newer: -1, older: -1))
    } else {
      // Reuse the least recently used slot.
      slot = oldest
      unlink(slot)
      byID[slots[slot].id] = nil
      slots[slot] = Entry(id: document.id, rev: rev, document: document, newer: -1, older: -1)
    }
    byID[document.id] = slot
    linkNewest(slot)
  }

  private mutating func touch(_ slot: Int) {
    guard slot != newest else { return }
    unlink(slot)
    linkNewest(slot)
  }

  private mutating func unlink(_ slot: Int) {
    let (newer, older) = (slots[slot].newer, slots[slot].older)
    if newer >= 0 { slots[newer].older = older } else { newest = older }
    if older >= 0 { slots[older].newer = newer } else { oldest = newer }
  }

  private mutating func linkNewest(_ slot: Int) {
    slots[slot].newer = -1
    slots[slot].older = newest
    if newest >= 0 { slots[newest].newer = slot }
    newest = slot
    if oldest < 0 { oldest = slot }
  }
}

extension DocumentCollection {
  /// How many parsed documents the collection's `where` queries keep, so that a query
  /// meeting them again skips reading and parsing their bodies: `N` keeps the `N` most
  /// recently returned; `0` (the default) and `-1` keep none. Seed 003 used `0` for a
  /// cache of the objects the app still holds; Settee's documents are values, which have
  /// no identity to track, so `0` means the same as `-1`. Kept in memory for this
  /// ``Database`` value only, as the seed's setting was (set it at launch).
  public var cacheSize: Int {
    database.documentCaches.withLock { $0[Array(name.utf8)]?.size ?? 0 }
  }

  /// Sets ``cacheSize`` (emptying the cache).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a size below -1.
  public func setCacheSize(_ size: Int) throws {
    guard size >= -1 else {
      throw SetteeError(.invalidArgument, "cache size must be -1, 0 or more, not \(size)")
    }
    database.documentCaches.withLock {
      $0[Array(name.utf8)] = (size, DocumentCache(capacity: size))
    }
  }

  /// Empties the cache (its size stays).
  public func flushCache() {
    database.documentCaches.withLock { caches in
      let key = Array(name.utf8)
      if let size = caches[key]?.size { caches[key] = (size, DocumentCache(capacity: size)) }
    }
  }

  /// How many parsed documents the cache holds now.
  package var cachedDocumentCount: Int {
    database.documentCaches.withLock { $0[Array(name.utf8)]?.cache.count ?? 0 }
  }

  /// Whether the collection keeps parsed documents.
  var cachesDocuments: Bool { cacheSize > 0 }

  /// The cached document for `id` at `rev`.
  func cachedDocument(_ id: String, rev: RevisionID) -> Document? {
    database.documentCaches.withLock { $0[Array(name.utf8)]?.cache.document(id, rev: rev) }
  }

  func cache(_ document: Document) {
    database.documentCaches.withLock { $0[Array(name.utf8)]?.cache.insert(document) }
  }
}
