/// Settee's version, as `settee --version` prints it and `GET /` names the vendor's.
package enum SetteeVersion {
  package static let string = "0.1.0"
}
