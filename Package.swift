// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "Settee",
  platforms: [.macOS(.v13), .iOS(.v16)],
  products: [
    .library(name: "Settee", targets: ["Settee"]),
    .library(name: "SetteeCore", targets: ["SetteeCore"]),
    .library(name: "SetteeServer", targets: ["SetteeServer"]),
    .library(name: "SetteeReplication", targets: ["SetteeReplication"]),
    .library(name: "SetteeJavaScript", targets: ["SetteeJavaScript"]),
    .executable(name: "settee", targets: ["settee"]),
    .executable(name: "settee-net", targets: ["settee-net"]),
  ],
  dependencies: [
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    // CouchDB's HTTP API (`settee serve`), in SetteeServer only: `import Settee` stays free
    // of SwiftNIO.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    // Hummingbird's header types (HTTPField.Name), already built with it.
    .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    // NIOCore's TimeAmount, for Hummingbird's connection settings; built with it.
    .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
    // Request bodies sent gzip-compressed (Cloudant's SDKs do by default): zlib through
    // NIO buffers, with a bound on the inflated size.
    .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    // The server's request log (one line per request), built with Hummingbird.
    .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
    // Graceful shutdown (Hummingbird's services run in its ServiceGroup), built with it.
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    // NIOHTTPTypes (HTTP parts in NIO pipelines), built with Hummingbird.
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
    // The replicator's HTTP client (SetteeReplication only): connection pooling, timeouts,
    // streaming and TLS for https peers, which CouchDB servers in production are.
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
  ],
  targets: [
    // ICU's collator, for view keys in CouchDB's order (Unicode Collation Algorithm), as
    // CouchDB itself uses: the system's libicu (Debian/Ubuntu: libicu-dev), loaded with
    // dlopen when the first view key is made (collator.c says why), or on Apple platforms
    // the libicucore they ship.
    .target(
      name: "CSetteeICU",
      linkerSettings: [
        // dlopen, for glibc before 2.34 (later ones have it in libc).
        .linkedLibrary("dl", .when(platforms: [.linux, .android])),
        .linkedLibrary("icucore", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
      ]
    ),
    // zlib's gzip, for the attachments CouchDB stores and replicates gzip-encoded: the
    // system's libz (zlib1g-dev, which Swift itself needs on Linux; in Apple's SDKs), as
    // compress-nio links it.
    .target(name: "CSetteeZlib", linkerSettings: [.linkedLibrary("z")]),
    // The block functions of MD5, SHA-1 and SHA-256 and PBKDF2's iterations, in C: an
    // unoptimized (debug) build runs them 20 times faster than the same Swift.
    .target(name: "CSetteeDigest"),
    .target(
      name: "SetteeCore",
      // MD5 for CouchDB's revision ids is Settee's own (Support/MD5.swift): swift-crypto
      // built BoringSSL for it alone, most of a clean build.
      dependencies: ["CSetteeICU", "CSetteeZlib", "CSetteeDigest"]
    ),
    .target(
      name: "Settee",
      dependencies: [
        "SetteeCore", .product(name: "GRDB", package: "GRDB.swift"),
        // SQLite's C API, for the few calls GRDB does not wrap (sqlite3_txn_state).
        .product(name: "GRDBSQLite", package: "GRDB.swift"),
      ]
    ),
    // JavaScriptCore's C API, for design documents' JavaScript: the system framework on
    // Apple platforms; on Linux WebKitGTK's libjavascriptcoregtk-4.1 (Debian/Ubuntu:
    // libjavascriptcoregtk-4.1-0), loaded with dlopen when the first function is compiled,
    // so that a build needs no JavaScript library and a process that runs none loads none.
    .target(
      name: "CSetteeJavaScriptCore",
      linkerSettings: [
        .linkedLibrary("dl", .when(platforms: [.linux, .android])),
        .linkedFramework(
          "JavaScriptCore", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
      ]
    ),
    // CouchDB's JavaScript design documents (views, reduces) on JavaScriptCore: a target of
    // its own, so that `import Settee` stays without it.
    .target(
      name: "SetteeJavaScript",
      dependencies: ["Settee", "SetteeCore", "CSetteeJavaScriptCore"]
    ),
    .target(
      name: "SetteeServer",
      dependencies: [
        "Settee", "SetteeReplication", "SetteeJavaScript", .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"),
        // HTTPParserError, to answer a client's framing errors 400 (built with Hummingbird).
        .product(name: "NIOHTTP1", package: "swift-nio"),
        // HTTPRequestPart and HTTPResponsePart, the parts Hummingbird's pipeline carries,
        // for the handler that answers unparsable heads with JSON (built with Hummingbird).
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "CompressNIO", package: "compress-nio"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
      ],
      // The web console at /_utils/, in the binary (PackageResources), so that it works
      // offline from one file.
      resources: [
        .embedInCode("Console/index.html"), .embedInCode("Console/console.css"),
        .embedInCode("Console/console.js"), .embedInCode("Console/api.js"),
        .embedInCode("Console/dom.js"), .embedInCode("Console/pages.js"),
        .embedInCode("Console/more.js"),
      ]
    ),
    .target(
      name: "SetteeReplication",
      dependencies: [
        "Settee", "SetteeJavaScript",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ]
    ),
    // `settee`: the local commands, without an HTTP stack (a newcomer's first build and
    // every local command's start-up stay small); `serve`, `replicate`, `replicator` and
    // `bench` hand over to `settee-net` (Support/HandOver.swift).
    .target(
      name: "SetteeCLI",
      dependencies: [
        "Settee", "SetteeJavaScript",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .executableTarget(name: "settee", dependencies: ["SetteeCLI"]),
    .target(
      name: "SetteeNetCLI",
      dependencies: [
        "SetteeCLI", "Settee", "SetteeServer", "SetteeReplication", "SetteeJavaScript",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        // The benchmarks' hand-written baselines talk to SQLite through GRDB directly.
        .product(name: "GRDB", package: "GRDB.swift"),
        // NIO's event loops as Swift's task executor (runTasksOnEventLoops), built with
        // Hummingbird.
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ]
    ),
    .executableTarget(name: "settee-net", dependencies: ["SetteeNetCLI"]),
    .target(
      name: "SetteeTestSupport",
      // An ordinary target (built by `swift build -c release` too): it reaches the engine
      // through `package` access, never `@testable`, which only debug builds allow.
      dependencies: ["SetteeCore", "Settee", .product(name: "GRDB", package: "GRDB.swift")],
      path: "Tests/SetteeTestSupport"),
    .testTarget(
      name: "SetteeJavaScriptTests",
      dependencies: ["Settee", "SetteeCore", "SetteeJavaScript", "SetteeTestSupport"]
    ),
    .testTarget(name: "SetteeCoreTests", dependencies: ["SetteeCore", "SetteeTestSupport"]),
    .testTarget(
      name: "SetteeTests",
      // GRDB, to look at the query plans SQLite makes for Settee's SQL.
      dependencies: ["Settee", "SetteeTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
    ),
    .testTarget(
      name: "SetteeServerTests",
      dependencies: [
        "Settee", "SetteeServer", "SetteeReplication", "SetteeJavaScript", "settee", "settee-net",
        "SetteeTestSupport",
        // The middleware tested in process, without a socket (built with Hummingbird).
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "CompressNIO", package: "compress-nio"),
      ]
    ),
    .testTarget(
      name: "SetteeReplicationTests",
      dependencies: [
        "Settee", "SetteeCore", "SetteeReplication", "SetteeJavaScript", "SetteeTestSupport",
        // Small peers served on loopback (built with Hummingbird for `settee serve`).
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
      ]
    ),
    .testTarget(
      name: "SetteeCLITests",
      dependencies: [
        "Settee", "SetteeCLI", "SetteeJavaScript", "settee", "settee-net", "SetteeTestSupport",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
