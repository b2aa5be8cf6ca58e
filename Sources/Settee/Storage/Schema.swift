import GRDB

/// The on-disk format: one table of collections, one of documents (the winning revision of
/// each, which queries read), and one of revision trees.
///
/// The revision table keeps every revision's id, parent and deletion flag (a tree: a
/// revision's parent is `NULL` for a root, which may be a stemmed one of a generation above
/// 1). The winning leaf's body is in `documents`, every other leaf's in `revisions.body`,
/// and a replaced revision keeps its body there too until compaction, as CouchDB keeps
/// them (within a budget, see v20). A document's first revision (no parent) is written to
/// `revisions` only when a later one replaces it: until then `documents` holds all there
/// is to know about it (files written before this rule have the row from the start;
/// readers take either).
enum Schema {
  /// The identifier of the newest migration: what a file made by this build holds. Code
  /// outside the engine that reads Settee's tables by hand (the benchmark's baselines)
  /// checks it, so that a schema change stops it loudly instead of skewing it silently.
  static var version: String { migrator.migrations.last ?? "" }

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.execute(
        sql: """
          CREATE TABLE collections (
            cid INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            last_seq INTEGER NOT NULL DEFAULT 0
          );
          CREATE TABLE documents (
            rid INTEGER PRIMARY KEY,
            cid INTEGER NOT NULL,
            id TEXT NOT NULL,
            rev TEXT NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL
          );
          CREATE UNIQUE INDEX documents_by_id ON documents(cid, id);
          CREATE UNIQUE INDEX documents_by_seq ON documents(cid, seq);
          CREATE TABLE revisions (
            rid INTEGER NOT NULL,
            rev TEXT NOT NULL,
            parent TEXT,
            deleted INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            body TEXT,
            PRIMARY KEY (rid, rev)
          ) WITHOUT ROWID;
          """)
    }
    migrator.registerMigration("v2-indexes") { db in
      // Query indexes. A JSON index's entries live in a table of its own, "ix_<xid>", with
      // one column of collation keys per field; `multi_docs` counts the documents that put
      // more than one entry into it (array fields), which decides whether it can order a
      // sort by itself; `entries` and `entries_per_key` are statistics counted when it was
      // built (as ANALYZE would), which the planner uses when its probes reach their cap.
      try db.execute(
        sql: """
          CREATE TABLE indexes (
            xid INTEGER PRIMARY KEY,
            cid INTEGER NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            fields TEXT NOT NULL,
            settings TEXT NOT NULL,
            multi_docs INTEGER NOT NULL DEFAULT 0,
            entries INTEGER NOT NULL DEFAULT 0,
            entries_per_key INTEGER NOT NULL DEFAULT 0,
            UNIQUE (cid, name)
          );
          CREATE INDEX documents_by_rev ON documents(cid, rev);
          """)
      // (documents_by_rev is dropped again by v9.)
    }
    migrator.registerMigration("v3-index-version") { db in
      // A collection's `index_version` changes with every change to its rows in `indexes`
      // (an index made or dropped, `multi_docs` or statistics updated), whichever
      // connection or process makes it, so readers can keep index lists in memory and
      // check them with one integer (see IndexCatalog).
      try db.execute(
        sql: """
          ALTER TABLE collections ADD COLUMN index_version INTEGER NOT NULL DEFAULT 0;
          CREATE TRIGGER indexes_inserted AFTER INSERT ON indexes BEGIN
            UPDATE collections SET index_version = index_version + 1 WHERE cid = NEW.cid;
          END;
          CREATE TRIGGER indexes_updated AFTER UPDATE ON indexes BEGIN
            UPDATE collections SET index_version = index_version + 1 WHERE cid IN (OLD.cid, NEW.cid);
          END;
          CREATE TRIGGER indexes_deleted AFTER DELETE ON indexes BEGIN
            UPDATE collections SET index_version = index_version + 1 WHERE cid = OLD.cid;
          END;
          """)
    }
    migrator.registerMigration("v4-holds-nul") { db in
      // Whether a document of the collection has ever held U+0000 in a string (JSONWriter
      // prints it as \u0000): only then do queries send such documents to the matcher,
      // since SQLite's JSON functions read strings only up to a U+0000. Set by writes,
      // never cleared (a later write may remove the string; the check stays correct).
      try db.execute(
        sql: """
          ALTER TABLE collections ADD COLUMN holds_nul INTEGER NOT NULL DEFAULT 0;
          UPDATE collections SET holds_nul = 1 WHERE cid IN (
            SELECT DISTINCT cid FROM documents WHERE instr(body, '\\u0000') > 0);
          """)
    }
    migrator.registerMigration("v5-views") { db in
      // Views (seed 002) and value indexes (seed 001, kind "value"). A view's rows live in
      // a table of their own, "vw_<vid>", ordered by the key's binary sort key
      // (ViewCollation) then document id; `last_seq` is the collection sequence number the
      // rows have caught up with, `total_rows` their count. `definition` holds a
      // declarative view's JSON (NULL for a Swift map closure, registered at run time);
      // `collator_version` the ICU version its keys were made with (a change rebuilds).
      // `other_values` counts rows whose value is not a number (null, or JSON text), so
      // that sums over views of numbers need not look at every value's type.
      // `generation` changes whenever the definition columns do, so that a process can keep
      // them in memory and check one integer (ids are never reused: AUTOINCREMENT).
      // `view_errors` keeps the documents whose map function threw, until they change.
      try db.execute(
        sql: """
          CREATE TABLE views (
            vid INTEGER PRIMARY KEY AUTOINCREMENT,
            cid INTEGER NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            definition TEXT,
            collation TEXT NOT NULL,
            collator_version TEXT NOT NULL,
            reduce TEXT,
            last_seq INTEGER NOT NULL DEFAULT 0,
            total_rows INTEGER NOT NULL DEFAULT 0,
            other_values INTEGER NOT NULL DEFAULT 0,
            generation INTEGER NOT NULL DEFAULT 0,
            UNIQUE (cid, kind, name)
          );
          CREATE TABLE view_errors (
            vid INTEGER NOT NULL,
            doc_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (vid, doc_id)
          ) WITHOUT ROWID;
          """)
    }
    migrator.registerMigration("v6-metadata") { db in
      // The store-wide metadata of seed 003: JSON values by key.
      try db.execute(
        sql: "CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
    }
    migrator.registerMigration("v7-where-settings") { db in
      // A collection's `where` face (seed 003): its aliases, defaults, queryable fields and
      // indexes as JSON (`version` goes up with every change, so processes can keep them
      // in memory), and the materialized fields' paths and defaults, one row per column of
      // the field table `wf_<cid>` (see WhereFieldTable), which its triggers read.
      try db.execute(
        sql: """
          CREATE TABLE where_settings (
            cid INTEGER PRIMARY KEY,
            settings TEXT NOT NULL,
            version INTEGER NOT NULL
          );
          CREATE TABLE where_fields (
            cid INTEGER NOT NULL,
            col INTEGER NOT NULL,
            path TEXT NOT NULL,
            has_default INTEGER NOT NULL,
            default_value,
            PRIMARY KEY (cid, col)
          ) WITHOUT ROWID;
          """)
    }
    migrator.registerMigration("v8-index-ddoc-partial") { db in
      // CouchDB's design document id of an index (NULL: `_design/<name>`) and its
      // `partial_filter_selector` as Mango JSON (NULL: every document is indexed).
      try db.execute(
        sql: """
          ALTER TABLE indexes ADD COLUMN ddoc TEXT;
          ALTER TABLE indexes ADD COLUMN partial_filter TEXT;
          """)
    }
    migrator.registerMigration("v9-no-rev-index") { db in
      // No query reads documents by revision (a `_rev` condition filters rows found
      // otherwise), and every write paid a B-tree insert at a random place for it: about
      // a sixth of an import's pages.
      try db.execute(sql: "DROP INDEX IF EXISTS documents_by_rev")
    }
    migrator.registerMigration("v10-where-whole-names-and-strings") { db in
      // `where` field tables read strings holding U+0000 whole, and members whose names
      // hold a backslash or a control character by their escaped labels (see
      // WhereFieldTable.extract and jsonPath): their triggers and columns are written anew.
      try WhereFieldTable.rebuildAll(db)
    }
    migrator.registerMigration("v11-stat1-orphans") { db in
      // Dropping a JSON index left its statistics row in sqlite_stat1 (until 91f9636); a
      // later index given the same xid would have shared it. Rows of entry tables that no
      // longer exist go.
      guard try db.tableExists("sqlite_stat1") else { return }
      try db.execute(
        sql: """
          DELETE FROM sqlite_stat1 WHERE tbl GLOB 'ix_*'
            AND tbl NOT IN (SELECT name FROM sqlite_master WHERE type = 'table')
          """)
    }
    migrator.registerMigration("v12-revision-trees") { db in
      // Branches (issue 31). `documents` keeps the winning leaf; every other leaf keeps
      // its body in `revisions.body`. `conflicts` counts a document's live losing leaves
      // and `deleted_conflicts` its deleted ones, so a write to a document without
      // branches (both 0) needs no look at its tree, and the conflicted documents of a
      // collection are listed and counted from a partial index without a scan.
      // `revs_limit` is how many revisions of each branch a collection keeps (CouchDB's
      // default, 1000); older ancestors are stemmed by the write that passes it.
      try db.execute(
        sql: """
          ALTER TABLE documents ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE documents ADD COLUMN deleted_conflicts INTEGER NOT NULL DEFAULT 0;
          CREATE INDEX documents_conflicted ON documents(cid, id) WHERE conflicts > 0;
          ALTER TABLE collections ADD COLUMN revs_limit INTEGER NOT NULL DEFAULT 1000;
          """)
    }
    migrator.registerMigration("v13-local-documents") { db in
      // CouchDB's local documents (`_local/<name>`): per collection, never in the changes
      // feed, all-docs, queries, views or exports, never replicated. `name` is the id
      // after `_local/`; `rev` the N of its `0-N` revision.
      try db.execute(
        sql: """
          CREATE TABLE local_documents (
            cid INTEGER NOT NULL,
            name TEXT NOT NULL,
            rev INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (cid, name)
          ) WITHOUT ROWID;
          """)
    }
    migrator.registerMigration("v14-attachments") { db in
      // Attachments (CouchDB's `_attachments`). A blob's bytes are stored once per digest
      // (`md5-<base64>` of the bytes as stored) in chunks, so that they are written and
      // read as streams; `attachments` names the blobs of each leaf revision (only leaves
      // keep attachments, as they keep bodies). A blob goes with its last reference.
      // `documents.attachments` says whether a leaf of the document holds any, so that
      // writes of documents without attachments never look for them.
      try db.execute(
        sql: """
          ALTER TABLE documents ADD COLUMN attachments INTEGER NOT NULL DEFAULT 0;
          CREATE TABLE attachment_blobs (
            aid INTEGER PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            length INTEGER NOT NULL
          );
          CREATE TABLE attachment_chunks (
            aid INTEGER NOT NULL,
            n INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (aid, n)
          );
          CREATE TABLE attachments (
            rid INTEGER NOT NULL,
            rev TEXT NOT NULL,
            name TEXT NOT NULL,
            aid INTEGER NOT NULL,
            content_type TEXT NOT NULL,
            revpos INTEGER NOT NULL,
            length INTEGER NOT NULL,
            encoding TEXT,
            PRIMARY KEY (rid, rev, name)
          ) WITHOUT ROWID;
          CREATE INDEX attachments_by_blob ON attachments(aid);
          """)
    }
    migrator.registerMigration("v15-epochs") { db in
      // A collection's epochs: each Database value that writes to it records the
      // sequence number its writes start after, under a random token. A sequence string
      // `N-<token>` given to a peer can then be checked against this file's history: a
      // restored older copy lacks the epochs written after it was taken, so a peer's
      // position in them starts again from where the copy's history and the peer's last
      // agree (see DocumentCollection.sequence(since:)).
      try db.execute(
        sql: """
          CREATE TABLE epochs (
            cid INTEGER NOT NULL,
            token TEXT NOT NULL,
            start_seq INTEGER NOT NULL,
            PRIMARY KEY (cid, token)
          ) WITHOUT ROWID;
          """)
      // The file's identity: random, made with the file (or by this migration for an older
      // one) and kept by copies (CouchDB's server `uuid`, from which PouchDB builds its
      // replication ids). Epochs, not this, tell a restored copy from the original.
      try db.execute(
        sql: """
          CREATE TABLE identity (uuid TEXT NOT NULL);
          INSERT INTO identity (uuid) VALUES (lower(hex(randomblob(16))));
          """)
    }
    migrator.registerMigration("v16-purges") { db in
      // Purges (CouchDB's `_purge`): revisions removed for good, with no tombstone, so
      // that no replication carries them as deletions. Each purge request of a collection
      // is recorded with its number, the document and the revisions it removed.
      try db.execute(
        sql: """
          CREATE TABLE purges (
            cid INTEGER NOT NULL,
            purge_seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            revs TEXT NOT NULL,
            PRIMARY KEY (cid, purge_seq)
          ) WITHOUT ROWID;
          """)
    }
    migrator.registerMigration("v17-dropped-collections") { db in
      // A deleted collection (CouchDB's `DELETE /{db}`) keeps its row and id, marked
      // `dropped`, with all its data removed: processes keep collection ids by name for the
      // life of the file, and one that kept the old id must still find the collection when
      // it is made again. The next write or `createCollection` revives the row.
      try db.execute(
        sql: "ALTER TABLE collections ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0")
    }
    migrator.registerMigration("v18-document-counts") { db in
      // How many documents are live and how many deleted (CouchDB's `doc_count` and
      // `doc_del_count`, and `_all_docs`' `total_rows`), kept by every write
      // (`DocumentWriter`) instead of counted per request: a count walked every document,
      // 17 ms per `GET /{db}` at 100,000 documents.
      try db.execute(
        sql: """
          ALTER TABLE collections ADD COLUMN doc_count INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE collections ADD COLUMN deleted_count INTEGER NOT NULL DEFAULT 0;
          UPDATE collections SET
            doc_count = (SELECT count(*) FROM documents d WHERE d.cid = collections.cid AND NOT d.deleted),
            deleted_count = (SELECT count(*) FROM documents d WHERE d.cid = collections.cid AND d.deleted);
          """)
    }
    migrator.registerMigration("v19-attachment-holders") { db in
      // Lists (all-documents, views, find, changes) show each document's attachments, as
      // CouchDB's do: this partial index tells at once whether any document of a
      // collection holds attachments, so that lists of a collection without any look for
      // none.
      try db.execute(
        sql: "CREATE INDEX documents_attached ON documents(cid) WHERE attachments != 0")
    }
    migrator.registerMigration("v20-kept-bodies") { db in
      // Replaced revisions keep their bodies and attachments until compaction, as CouchDB's
      // do (`GET ?rev=` of an older revision, `_revs_info` "available"). `kept_bodies` counts
      // the bodies replaced revisions were given since the collection's last compaction:
      // past its budget (as many as the collection has documents, at least 1,000) a write
      // keeps only the body it replaces and clears its document's older ones, so the file
      // holds at most about twice its documents' bodies between compactions, the ratio at
      // which CouchDB's own compaction daemon starts. The index finds a document's kept
      // bodies (and a collection's, for compaction) without reading its whole history.
      try db.execute(
        sql: """
          ALTER TABLE collections ADD COLUMN kept_bodies INTEGER NOT NULL DEFAULT 0;
          CREATE INDEX revisions_with_body ON revisions(rid) WHERE body IS NOT NULL;
          """)
    }
    return migrator
  }

  /// Migrations a file may lack and still be read as it is: they only remove what no
  /// reader needs, or rewrite what readers read as before until a writer migrates. A read-only open (which cannot migrate) accepts a file missing only
  /// these.
  static let readerOptional: Set<String> = [
    "v9-no-rev-index", "v10-where-whole-names-and-strings", "v11-stat1-orphans",
    "v19-attachment-holders", "v20-kept-bodies",
  ]
}

extension Database {
  /// The identifier of the newest schema migration (``Schema/version``).
  package static var schemaVersion: String { Schema.version }
}
