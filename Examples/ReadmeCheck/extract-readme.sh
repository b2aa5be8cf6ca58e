#!/usr/bin/env bash
# Writes the README's ```swift blocks, in order, into Sources/ReadmeCheck/main.swift.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p Sources/ReadmeCheck
awk '/^```swift$/ { inside = 1; next } /^```$/ { inside = 0 } inside' ../../README.md \
  > Sources/ReadmeCheck/main.swift
test -s Sources/ReadmeCheck/main.swift
