#!/usr/bin/env bash
# Writes the README's ```swift blocks, in order, into Sources/ReadmeCheck/main.swift, then
# awaits the async functions they define (through AsyncParts, so the top level stays
# synchronous code as the README's is).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p Sources/ReadmeCheck
{
  awk '/^```swift$/ { inside = 1; next } /^```$/ { inside = 0 } inside' ../../README.md
  cat <<'SWIFT'

// Appended by extract-readme.sh: the README's async functions, awaited.
try AsyncParts.wait { [people] in print(try await adults(in: people).count) }
try AsyncParts.wait { [users] in await finish(users) }
try AsyncParts.wait { [notes] in try await backUp(notes) }
SWIFT
} > Sources/ReadmeCheck/main.swift
test -s Sources/ReadmeCheck/main.swift
