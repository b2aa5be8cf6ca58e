import Foundation
import Settee
import SetteeCLI
import SetteeCore
import SetteeJavaScript
import SetteeServer

/// `settee bench --server`: requests per second over loopback with keep-alive, against a
/// Hummingbird server in the same process answering a constant body of the same size
/// (the HTTP layer's floor); `_bulk_docs` against `importDocuments` of the same documents
/// (the engine's write limit). Issue 32's figures.
struct ServerBench {
  let count: Int
  let quick: Bool
  let directory: URL
  let log: @Sendable (String) -> Void
  /// The workloads to run (``workloads``' keys); all when `nil`.
  var only: Set<String>? = nil

  /// `--only`'s keys and the workloads they name.
  static let workloads = [
    "get": "GET", "find": "_find", "changes": "_changes", "all_docs": "_all_docs",
    "changes_docs": "_changes docs", "view": "view", "bulk_docs": "_bulk_docs",
  ]

  /// Whether `--only` keeps the workload `what`.
  func wanted(_ what: String) -> Bool {
    only.map { keys in keys.contains { Self.workloads[$0] == what } } ?? true
  }

  /// Starts the two servers in this process and times the requests from a thread of its
  /// own (the servers' handlers have Swift's cooperative threads to themselves).
  func run() async throws -> [BenchResult] {
    var data = BenchData()
    let people = data.people(count)
    let database = try Settee.Database(path: directory.appendingPathComponent("server.db").path)
    let main = database.collection("people")
    log("preparing \(count) documents…")
    try await onOwnThread {
      var iterator = people.makeIterator()
      var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { iterator.next() }
      try main.importDocuments(from: &reader)
      try main.ensureIndexed(["docNumber"], name: "num")
    }

    let server = CouchServer(
      database: database, configuration: ServerConfiguration(port: 0, logLevel: .none))
    let (serving, servedPort) = try await Self.listening { try await server.run(onListening: $0) }
    let (floor, floorPort) = try await Self.listening {
      try await CouchServer.runFloor(maxBytes: 8 << 20, onListening: $0)
    }
    defer {
      serving.cancel()
      floor.cancel()
    }
    return try await onOwnThread {
      try measure(people, database, servedPort: servedPort, floorPort: floorPort)
    }
  }

  private func measure(
    _ people: [[UInt8]], _ database: Settee.Database, servedPort: Int, floorPort: Int
  ) throws -> [BenchResult] {
    var settee = try BenchClient(port: servedPort)
    var baseline = try BenchClient(port: floorPort)

    var results: [BenchResult] = []
    let requests = quick ? 200 : 5_000
    let ids = (0..<count).map { BenchData.id($0, prefix: "p") }

    // Each workload against the floor answering as many bytes as its last answer had.
    func versusFloor(
      _ name: String, _ what: String, n: Int, target: Double? = nil,
      _ request: (Int) -> (method: String, path: String, body: [UInt8])
    ) throws {
      guard wanted(what) else { return }
      var bytes = 0
      let time = try Measure.median(repetitions: quick ? 1 : 3) {
        for number in 0..<n {
          let (method, path, body) = request(number)
          let answer = try settee.send(method, path, body: body)
          guard answer.status == 200, answer.body.count > 20 else {
            throw Self.failed(what, answer)
          }
          bytes = answer.body.count
        }
      }
      let (method, _, body) = request(0)
      let floorTime = try Measure.median(repetitions: quick ? 1 : 3) {
        for _ in 0..<n { _ = try baseline.send(method, "/?bytes=\(bytes)", body: body) }
      }
      results.append(
        BenchResult(name: name, n: n, settee: time, baseline: floorTime, target: target))
    }

    // GET /{db}/{id}, each a different document.
    try versusFloor("GET /{db}/{id}, keep-alive, vs a constant body", "GET", n: requests, target: 2)
    {
      ("GET", "/people/\(ids[($0 * 7919) % ids.count])", [])
    }
    // An indexed _find for one document.
    try versusFloor("indexed _find of one document, vs a constant body", "_find", n: requests / 2) {
      ("POST", "/people/_find", Array(#"{"selector":{"docNumber":\#(($0 * 7919) % count)}}"#.utf8))
    }
    // A _changes read of 10,000 rows.
    let rows = min(10_000, count)
    try versusFloor(
      "_changes read of \(rows) rows, vs a constant body", "_changes", n: quick ? 3 : 20
    ) { _ in ("GET", "/people/_changes?limit=\(rows)", []) }

    // Lists with their documents (issue 55: they carry attachments, offsets and ETags as
    // CouchDB's do, and must cost no more): pages of _all_docs, a _changes batch, and a
    // view's pages, each against the floor answering as many bytes.
    try versusFloor(
      "_all_docs?include_docs=true&limit=100 pages, vs a constant body", "_all_docs",
      n: requests / 10
    ) { number in
      let start = ids[(number * 7919) % ids.count]
      return ("GET", "/people/_all_docs?include_docs=true&limit=100&startkey=%22\(start)%22", [])
    }
    let batch = min(1_000, count)
    try versusFloor(
      "_changes?include_docs=true of \(batch) rows, vs a constant body", "_changes docs",
      n: quick ? 3 : 50
    ) { number in
      (
        "GET",
        "/people/_changes?include_docs=true&limit=\(batch)&since=\((number * 7919) % max(1, count - batch))",
        []
      )
    }
    let view: JSON = ["language": "settee", "views": ["num": ["key": "docNumber"]]]
    guard
      try settee.send("PUT", "/people/_design/bench", body: JSONWriter.bytes(view)).status == 201,
      try settee.send("GET", "/people/_design/bench/_view/num?limit=1").status == 200
    else { throw SetteeError(.io, "cannot make the benchmark's view") }
    try versusFloor(
      "view query, include_docs=true&limit=100 pages, vs a constant body", "view",
      n: requests / 10
    ) { number in
      (
        "GET",
        "/people/_design/bench/_view/num?include_docs=true&limit=100&startkey=\((number * 7919) % count)",
        []
      )
    }

    // Throughput: the same reads from 16 connections at once, against CouchDB 3.5.0's
    // figures where issue 59 measured them and against the constant body at the same
    // concurrency (the ceiling of the HTTP layer on this machine).
    func throughput(
      _ name: String, _ what: String, n: Int, couchdb: Double?,
      _ request: @escaping @Sendable (Int) -> (method: String, path: String, body: [UInt8])
    ) throws {
      guard wanted(what) else { return }
      let (method, path, body) = request(0)
      let bytes = try settee.send(method, path, body: body).body.count
      var settee = 0.0
      var floor = 0.0
      // Alternated, the best of each: the machine's noise moves both sides alike.
      for _ in 0..<(quick ? 1 : 3) {
        let once = try Throughput.time(port: servedPort, requests: n, what: what, request)
        settee = settee == 0 ? once : min(settee, once)
        let floorOnce = try Throughput.time(port: floorPort, requests: n, what: what + " (floor)") {
          _ in (method, "/?bytes=\(bytes)", body)
        }
        floor = floor == 0 ? floorOnce : min(floor, floorOnce)
      }
      let connections = Throughput.connections
      log(
        String(
          format: "%@: %.0f requests/s over %d connections; the constant body %.0f/s", name,
          Double(n) / settee, connections, Double(n) / floor))
      results.append(
        BenchResult(
          name: "\(name), \(connections) connections, vs a constant body", n: n, settee: settee,
          baseline: floor))
      if let couchdb {
        results.append(
          BenchResult(
            name: "\(name), \(connections) connections, vs CouchDB 3.5.0 (\(Int(couchdb))/s)", n: n,
            settee: settee, baseline: Double(n) / couchdb, target: 0.1))
      }
    }
    let many = quick ? 400 : 20_000
    let idList = ids
    let documents = count
    try throughput("GET /{db}/{id}", "GET", n: many, couchdb: Throughput.CouchDB.getByID) {
      ("GET", "/people/\(idList[($0 * 7919) % idList.count])", [])
    }
    try throughput("indexed _find", "_find", n: many / 2, couchdb: Throughput.CouchDB.indexedFind) {
      (
        "POST", "/people/_find",
        Array(#"{"selector":{"docNumber":\#(($0 * 7919) % documents)}}"#.utf8)
      )
    }
    try throughput("_all_docs include_docs pages of 100", "_all_docs", n: many / 20, couchdb: nil) {
      (
        "GET",
        "/people/_all_docs?include_docs=true&limit=100&startkey=%22\(idList[($0 * 7919) % idList.count])%22",
        []
      )
    }
    try throughput(
      "_changes include_docs batches of \(batch)", "_changes docs", n: quick ? 16 : 400,
      couchdb: nil
    ) {
      (
        "GET",
        "/people/_changes?include_docs=true&limit=\(batch)&since=\(($0 * 7919) % max(1, documents - batch))",
        []
      )
    }
    try throughput("view include_docs pages of 100", "view", n: many / 20, couchdb: nil) {
      (
        "GET",
        "/people/_design/bench/_view/num?include_docs=true&limit=100&startkey=\(($0 * 7919) % documents)",
        []
      )
    }

    // _bulk_docs of 1,000 documents at a time into a new database (with `design` written
    // first), against the engine's import of the same.
    func bulkLoad(_ name: String, design: JSON? = nil) throws {
      guard try settee.send("PUT", "/\(name)").status == 201 else {
        throw SetteeError(.io, "cannot create \(name)")
      }
      if let design {
        let answer = try settee.send(
          "PUT", "/\(name)/_design/bench", body: JSONWriter.bytes(design))
        guard answer.status == 201 else { throw Self.failed("PUT _design/bench", answer) }
      }
      var start = 0
      while start < people.count {
        let batch = people[start..<min(start + 1000, people.count)]
        var body = Array(#"{"docs":["#.utf8)
        for (index, line) in batch.enumerated() {
          if index > 0 { body.append(UInt8(ascii: ",")) }
          body += line
        }
        body += Array("]}".utf8)
        let answer = try settee.send("POST", "/\(name)/_bulk_docs", body: body)
        guard answer.status == 201 else { throw Self.failed("_bulk_docs", answer) }
        start += 1000
      }
    }
    guard wanted("_bulk_docs") else { return results }
    var run = 0
    let bulkTime = try Measure.median(repetitions: quick ? 1 : 3) {
      run += 1
      try bulkLoad("bulk\(run)")
    }
    var importRun = 0
    let importTime = try Measure.median(repetitions: quick ? 1 : 3) {
      importRun += 1
      var lines = people.makeIterator()
      var records = JSONRecordReader(maxRecordBytes: 1 << 20) { lines.next() }
      try database.collection("import\(importRun)").importDocuments(from: &records)
    }
    guard try database.collection("bulk1").count() == count,
      try database.collection("import1").count() == count
    else {
      throw SetteeError(.storage, "_bulk_docs and import did not store the same documents")
    }
    results.append(
      BenchResult(
        name: "_bulk_docs of 1,000 documents, vs import of the same", n: count, settee: bulkTime,
        baseline: importTime, target: 2))
    // CouchDB 3.5.0 loaded 100,000 such documents in 6.06 s (issue 59), one client.
    results.append(
      BenchResult(
        name: "_bulk_docs load, one client, vs CouchDB 3.5.0 (6.06 s for 100,000)", n: count,
        settee: bulkTime, baseline: Throughput.CouchDB.bulkLoadOf100000 * Double(count) / 100_000,
        target: 0.1))

    // The same load through a validate_doc_update that reads every new document (issue
    // 47), alternated with the same load without one; both must store every document.
    if DesignFunctions.isAvailable {
      let rules: JSON = [
        "validate_doc_update": """
        function (newDoc, oldDoc, userCtx) {
          if (!newDoc._deleted && typeof newDoc.name !== 'string') throw({forbidden: 'a name is required'});
          if (oldDoc && oldDoc.docNumber !== newDoc.docNumber) throw({forbidden: 'docNumber is fixed'});
        }
        """
      ]
      var validatedRun = 0
      let paired = try Measure.paired(
        repetitions: quick ? 1 : 3, prepareFirst: { _ in validatedRun += 1 },
        { _ in try bulkLoad("validated\(validatedRun)", design: rules) },
        prepareSecond: { _ in () }, { _ in try bulkLoad("unvalidated\(validatedRun)") })
      guard try database.collection("validated1").count() == count + 1,
        try database.collection("unvalidated1").count() == count
      else {
        throw SetteeError(.storage, "_bulk_docs with validation did not store every document")
      }
      results.append(
        BenchResult(
          name: "_bulk_docs through validate_doc_update, vs without", n: count, paired,
          target: 1.5))
    }
    return results
  }

  static func failed(_ what: String, _ answer: BenchClient.Answer) -> SetteeError {
    SetteeError(
      .io,
      "\(what) answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
    )
  }

  /// Runs a server in a task of this process; the task and the port, once it listens.
  static func listening(
    _ run: @escaping @Sendable (@escaping @Sendable (Int) async -> Void) async throws -> Void
  ) async throws -> (Task<Void, any Error>, Int) {
    let port = Locked<Int?>(nil)
    let task = Task { try await run { listening in port.withLock { $0 = listening } } }
    let deadline = Date().addingTimeInterval(30)
    while port.withLock({ $0 }) == nil {
      guard Date() < deadline else {
        task.cancel()
        throw SetteeError(.io, "the benchmark's servers did not start within 30 s")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    return (task, port.withLock { $0! })
  }
}

/// A minimal HTTP/1.1 client on one kept-alive loopback connection: it sends a request and
/// reads the answer by its `Content-Length` or chunks, and no more (the benchmark's client
/// must cost little next to what it measures).
struct BenchClient {
  struct Answer {
    var status: Int
    var body: [UInt8]
  }

  private let fd: Int32
  /// What was received; the unread part starts at `start`.
  private var buffer: [UInt8] = []
  private var start = 0
  /// One receive's space, kept for the connection.
  private var chunk = [UInt8](repeating: 0, count: 1 << 16)

  init(port: Int) throws {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw SetteeError(.io, "cannot connect to 127.0.0.1:\(port)") }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  mutating func send(_ method: String, _ path: String, body: [UInt8] = []) throws -> Answer {
    var request: [UInt8] = []
    request.reserveCapacity(method.utf8.count + path.utf8.count + body.count + 128)
    request += method.utf8
    request.append(UInt8(ascii: " "))
    request += path.utf8
    request += " HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8
    if !body.isEmpty || method == "POST" || method == "PUT" {
      request += "Content-Type: application/json\r\nContent-Length: ".utf8
      request += String(body.count).utf8
      request += "\r\n".utf8
    }
    request += "\r\n".utf8
    request += body
    var sent = 0
    while sent < request.count {
      let written = request[sent...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { throw SetteeError(.io, "the connection closed while sending") }
      sent += written
    }
    // The head is read as bytes (no strings made): the status after `HTTP/1.1 `, then the
    // `Content-Length` or `Transfer-Encoding: chunked` line.
    let headerEnd = try readUntil(Self.headEnd)
    let head = start..<headerEnd
    var status = 0
    if let space = buffer[head].firstIndex(of: UInt8(ascii: " ")) {
      for byte in buffer[(space + 1)...].prefix(3) { status = status * 10 + Int(byte) - 48 }
    }
    let length = value(of: Self.contentLength, in: head).flatMap { digits -> Int? in
      var number = 0
      for byte in digits where byte != UInt8(ascii: " ") {
        guard (48...57).contains(byte) else { return nil }
        number = number * 10 + Int(byte) - 48
      }
      return number
    }
    let chunked =
      value(of: Self.transferEncoding, in: head).map {
        Self.lowercased($0) == Array(" chunked".utf8)
      }
      ?? false
    start = headerEnd + 4
    var bodyBytes: [UInt8] = []
    if let length {
      try fill(length)
      bodyBytes = Array(buffer[start..<(start + length)])
      start += length
    } else if chunked {
      while true {
        let lineEnd = try readUntil(Self.lineEnd)
        var size = 0
        for byte in buffer[start..<lineEnd] {
          guard let digit = Self.hexDigit(byte) else { break }
          size = size * 16 + digit
        }
        start = lineEnd + 2
        try fill(size + 2)
        bodyBytes += buffer[start..<(start + size)]
        start += size + 2
        if size == 0 { break }
      }
    }
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      start = 0
    }
    return Answer(status: status, body: bodyBytes)
  }

  static let headEnd = Array("\r\n\r\n".utf8)
  static let lineEnd = Array("\r\n".utf8)
  static let contentLength = Array("content-length:".utf8)
  static let transferEncoding = Array("transfer-encoding:".utf8)

  static func lowercased<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
    bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }
  }

  static func hexDigit(_ byte: UInt8) -> Int? {
    switch byte {
    case 48...57: Int(byte) - 48
    case 97...102: Int(byte) - 87
    case 65...70: Int(byte) - 55
    default: nil
    }
  }

  /// The value of the header line named `name` (lowercase, with its colon) in the head.
  private func value(of name: [UInt8], in head: Range<Int>) -> ArraySlice<UInt8>? {
    var lineStart = head.lowerBound
    while lineStart < head.upperBound {
      var lineEnd = lineStart
      while lineEnd < head.upperBound && buffer[lineEnd] != UInt8(ascii: "\r") { lineEnd += 1 }
      if lineEnd - lineStart > name.count
        && zip(buffer[lineStart..<(lineStart + name.count)], name).allSatisfy({
          ((65...90).contains($0) ? $0 + 32 : $0) == $1
        })
      {
        return buffer[(lineStart + name.count)..<lineEnd]
      }
      lineStart = lineEnd + 2
    }
    return nil
  }

  /// The index in `buffer` where `delimiter` starts, at or after `start`, receiving until
  /// it has arrived.
  private mutating func readUntil(_ delimiter: [UInt8]) throws -> Int {
    var from = start
    while true {
      var index = from
      while index + delimiter.count <= buffer.count {
        if buffer[index] == delimiter[0]
          && buffer[index..<(index + delimiter.count)].elementsEqual(delimiter)
        {
          return index
        }
        index += 1
      }
      from = max(start, buffer.count - delimiter.count + 1)
      try receive()
    }
  }

  /// Receives until `count` bytes after `start` are in `buffer`.
  private mutating func fill(_ count: Int) throws {
    while buffer.count - start < count { try receive() }
  }

  private mutating func receive() throws {
    var received: Int
    repeat {
      received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    } while received < 0 && errno == EINTR
    guard received > 0 else { throw SetteeError(.io, "the connection closed while reading") }
    buffer += chunk[0..<received]
  }
}
