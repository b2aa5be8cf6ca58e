/// The JavaScript environment CouchDB's query server gives design documents' functions
/// (its documentation's "JavaScript Functions" and "Query Server Protocol"), written for
/// Settee: `emit`, `log`, `sum`, `isArray`, `toJSON`, and `require` of CommonJS modules
/// kept in the design document. Functions are compiled as couchjs compiles them: their
/// source text evaluated as an expression in the global scope, in sloppy mode, or else as
/// a program whose last anonymous function declaration is the function (CouchDB 3's
/// rewrite: a trailing semicolon, statements before the function).
///
/// Swift calls three global functions with one JSON argument each:
/// - `__settee_define({ddoc, map, reduce, filter, validate, viewFilter, maxEmits, maxBytes})`:
///   compiles the functions (`viewFilter`: a view's map function, run as a filter that
///   passes the documents it emits a row for);
/// - `__settee_map(doc)`: `{"rows": [[key, value], …], "log": […]}` or `{"error": text}`;
/// - `__settee_map_batch([doc, …])`: `__settee_map`'s result for each, as JSON text (one
///   document's past `maxBytes` replaced by an error);
/// - `__settee_reduce([keys, values, rereduce])`: `{"value": v}` or `{"error": text}`;
/// - `__settee_filter_batch({docs, req})`: `{"results": [Bool, …]}` or `{"error": text}`;
/// - `__settee_validate_batch({writes: [[newDoc, oldDoc], …], userCtx, secObj})`:
///   `{"results": […]}`, for each write `true`, `{"forbidden": reason}`,
///   `{"unauthorized": reason}` or `{"error": name, "reason": text}` (couchjs's answers for
///   `validate_doc_update`).
///
/// Each answer also carries `"log"`: the messages `log` was given during the call (at most
/// 100 per call, or per document of a map batch).
enum CouchJavaScript {
  static let environment = #"""
    (function (global) {
      var compile = eval; // indirect: the global scope, sloppy mode, as couchjs compiles
      var ddoc = {}, map = null, reduce = null, filter = null, validate = null, maxEmits = 0;
      var maxBytes = 0;
      var viewsOnly = true;
      var emitted = null, logged = [], modules = {};

      function describe(error) {
        if (error instanceof Error) return error.name + ": " + error.message;
        try { return JSON.stringify(error); } catch (e) { return String(error); }
      }
      function compileFunction(source, what) {
        var value;
        try {
          value = compile("(" + source + "\n)");
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          value = compileProgram(source, error);
        }
        if (typeof value !== "function") {
          throw new TypeError("the " + what + " function's source is not a function expression");
        }
        return value;
      }
      // CouchDB 3 evaluates a function's source as a program whose last anonymous function
      // declaration is turned into an expression (its rewriteFunInt), so that
      // "function (doc) {...};" with a trailing semicolon, or statements before the
      // function, compile: the program's value is the function. Without a parser, each
      // "function" keyword from the last is tried as that declaration by making it the
      // operand of a comma expression; the first that gives a function is the one.
      function compileProgram(source, syntaxError) {
        var candidates = [], pattern = /\bfunction\s*\(/g, found;
        while ((found = pattern.exec(source)) !== null) candidates.push(found.index);
        for (var i = candidates.length - 1; i >= 0; i--) {
          var at = candidates[i];
          try {
            var value = compile(source.slice(0, at) + "0, " + source.slice(at) + "\n");
            if (typeof value === "function") return value;
          } catch (error) {
            if (!(error instanceof SyntaxError)) throw error;
          }
        }
        throw syntaxError;
      }
      // CommonJS modules kept in the design document, by path ("views/lib/names", or
      // relative to the requiring module: "./names", "../lib/names"). A view's functions may
      // load only what is under views.lib, as in CouchDB.
      function makeRequire(directory) {
        return function require(name) {
          if (typeof name !== "string" || name === "") throw new Error("require needs a module path");
          var parts = name.charAt(0) === "." ? directory.concat(name.split("/")) : name.split("/");
          var path = [];
          for (var i = 0; i < parts.length; i++) {
            if (parts[i] === "" || parts[i] === ".") continue;
            if (parts[i] === "..") {
              if (path.length === 0) throw new Error("require: " + name + " leaves the design document");
              path.pop();
            } else {
              path.push(parts[i]);
            }
          }
          if (viewsOnly && (path[0] !== "views" || path[1] !== "lib")) {
            throw new Error("require: a view may only load modules under views.lib, not " + path.join("/"));
          }
          var key = path.join("/");
          if (Object.prototype.hasOwnProperty.call(modules, key)) return modules[key].exports;
          var source = ddoc;
          for (var j = 0; j < path.length; j++) {
            source = source !== null && typeof source === "object" &&
              Object.prototype.hasOwnProperty.call(source, path[j]) ? source[path[j]] : undefined;
          }
          if (typeof source !== "string") throw new Error("require: no module " + key + " in the design document");
          var module = {id: key, exports: {}};
          modules[key] = module;
          var body = compile("(function (module, exports, require) {" + source + "\n})");
          try {
            body.call(module.exports, module, module.exports, makeRequire(path.slice(0, -1)));
          } catch (error) {
            delete modules[key];
            throw error;
          }
          return module.exports;
        };
      }

      global.emit = function (key, value) {
        if (emitted === null) throw new Error("emit is called from a map function");
        if (emitted.length >= maxEmits) {
          throw new Error("a map function emitted more than " + maxEmits + " rows for one document");
        }
        emitted.push([key === undefined ? null : key, value === undefined ? null : value]);
      };
      // At most 100 messages a call, each cut to 16,000 characters (CouchDB's
      // [log] max_message_size).
      global.log = function (message) {
        if (logged.length >= 100) return;
        var text = typeof message === "string" ? message : describe(message);
        if (text.length > 16000) {
          text = text.slice(0, 16000) + "\u2026 (" + text.length + " characters)";
        }
        logged.push(text);
      };
      global.sum = function (values) {
        var total = 0;
        for (var i = 0; i < values.length; i++) total += values[i];
        return total;
      };
      global.isArray = function (value) { return Array.isArray(value); };
      global.toJSON = function (value) { return JSON.stringify(value); };
      global.require = makeRequire([]);

      global.__settee_define = function (definition) {
        ddoc = definition.ddoc || {};
        maxEmits = definition.maxEmits;
        maxBytes = definition.maxBytes || 0;
        modules = {};
        map = definition.map === undefined ? null : compileFunction(definition.map, "map");
        reduce = definition.reduce === undefined ? null : compileFunction(definition.reduce, "reduce");
        filter = definition.filter === undefined ? null : compileFunction(definition.filter, "filter");
        validate = definition.validate === undefined ? null :
          compileFunction(definition.validate, "validate_doc_update");
        // A filter or validate_doc_update may load any module of its design document; a
        // view only views.lib's.
        viewsOnly = filter === null && validate === null;
        if (definition.viewFilter !== undefined) {
          // _changes?filter=_view: a change passes when the view's map function emits a
          // row for its document (couchjs's filter_view); a map that throws fails the call.
          var viewMap = compileFunction(definition.viewFilter, "map");
          filter = function (doc) {
            emitted = [];
            try {
              viewMap.call(ddoc, doc);
              return emitted.length > 0;
            } finally {
              emitted = null;
            }
          };
        }
        return true;
      };
      global.__settee_filter_batch = function (call) {
        var docs = call.docs, req = call.req, results = new Array(docs.length);
        logged = [];
        try {
          for (var i = 0; i < docs.length; i++) results[i] = filter.call(ddoc, docs[i], req) ? true : false;
          return {results: results, log: logged};
        } catch (error) {
          return {error: describe(error), log: logged};
        }
      };
      // couchjs's rule: an Error (it has a name and a stack) is the function failing; any
      // other value thrown is the answer, {forbidden: …} and {unauthorized: …} refusals.
      function validateOne(newDoc, oldDoc, userCtx, secObj) {
        try {
          validate.call(ddoc, newDoc, oldDoc, userCtx, secObj);
          return true;
        } catch (error) {
          if (error !== null && typeof error === "object" && !(error.name && error.stack)) {
            if (Object.prototype.hasOwnProperty.call(error, "forbidden")) return {forbidden: error.forbidden};
            if (Object.prototype.hasOwnProperty.call(error, "unauthorized")) return {unauthorized: error.unauthorized};
            var keys = Object.keys(error);
            if (keys.length === 1) return {error: "unknown_error", reason: typeof error[keys[0]] === "string" ? error[keys[0]] : describe(error[keys[0]])};
          } else if (typeof error === "string") {
            return {error: "unknown_error", reason: error};
          }
          return {error: error instanceof Error ? error.name : "unknown_error", reason: describe(error)};
        }
      }
      global.__settee_validate_batch = function (call) {
        var writes = call.writes, results = new Array(writes.length);
        logged = [];
        for (var i = 0; i < writes.length; i++) {
          results[i] = validateOne(writes[i][0], writes[i][1], call.userCtx, call.secObj);
        }
        return {results: results, log: logged};
      };
      global.__settee_map = function (doc) {
        emitted = [];
        logged = [];
        try {
          map(doc);
          return {rows: emitted, log: logged};
        } catch (error) {
          return {error: describe(error), log: logged};
        } finally {
          emitted = null;
        }
      };
      // Printed here, a document at a time, so that one document's rows are bounded in
      // bytes as they are in number: the batch's text is returned as it is.
      global.__settee_map_batch = function (docs) {
        var results = new Array(docs.length);
        for (var i = 0; i < docs.length; i++) {
          var result = global.__settee_map(docs[i]);
          var text = JSON.stringify(result);
          if (text.length > maxBytes) {
            text = JSON.stringify({
              error: "a map function emitted more than " + maxBytes + " bytes for one document",
              log: result.log
            });
          }
          results[i] = text;
        }
        return "[" + results.join(",") + "]";
      };
      global.__settee_reduce = function (call) {
        logged = [];
        try {
          var value = reduce(call[0], call[1], call[2]);
          return {value: value === undefined ? null : value, log: logged};
        } catch (error) {
          return {error: describe(error), log: logged};
        }
      };
    })(this);
    """#
}
