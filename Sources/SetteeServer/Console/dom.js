// Building the page from data, never from markup: every string given here becomes a text
// node or an attribute value, so a document's content, ids, field names and error reasons
// show as text, whatever characters they hold.

/**
 * An element: `el("a", {href: "#/"}, "text", child)`. Attributes named `on…` take
 * functions (listeners); `class`, `value` and the rest are set as attributes or
 * properties. Children are nodes or strings (text); `null` and `false` are skipped.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "value" || name === "checked" || name === "disabled") {
      node[name] = value;
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `node` with `children`. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/** A paragraph that says what went wrong, in words (role="alert"). */
export function problem(error) {
  return el("p", { class: "problem", role: "alert" }, describe(error));
}

/** An error as a person reads it: CouchDB's error name and reason, or the message. */
export function describe(error) {
  if (error && error.status !== undefined) {
    return `${error.status} ${error.error}: ${error.reason}`;
  }
  return String(error && error.message ? error.message : error);
}

/** Bytes as a person reads them. */
export function bytes(count) {
  if (typeof count !== "number") return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/**
 * JSON text indented two spaces, from the text itself: numbers stay as written (a
 * JavaScript number would round an integer past 2^53), strings and member order too.
 * `text` must be valid JSON (JSON.parse has checked it).
 */
export function indentJSON(text) {
  let out = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  const newline = () => "\n" + "  ".repeat(depth);
  for (let position = 0; position < text.length; position += 1) {
    const character = text[position];
    if (inString) {
      out += character;
      if (escaped) escaped = false;
      else if (character === "\\") escaped = true;
      else if (character === '"') inString = false;
      continue;
    }
    switch (character) {
      case '"':
        inString = true;
        out += character;
        break;
      case "{":
      case "[": {
        const closing = character === "{" ? "}" : "]";
        let next = position + 1;
        while (/\s/.test(text[next] || "")) next += 1;
        if (text[next] === closing) {
          out += character + closing;
          position = next;
        } else {
          depth += 1;
          out += character + newline();
        }
        break;
      }
      case "}":
      case "]":
        depth -= 1;
        out += newline() + character;
        break;
      case ",":
        out += "," + newline();
        break;
      case ":":
        out += ": ";
        break;
      case " ":
      case "\n":
      case "\r":
      case "\t":
        break;
      default:
        out += character;
    }
  }
  return out;
}

/**
 * The members of a JSON object's text, in order: name → the value's own text (numbers,
 * strings and nesting as written). `text` must be valid JSON (the server sent it).
 */
export function members(text) {
  const found = new Map();
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  let keyStart = -1;
  let name = null;
  const finish = (end) => {
    if (name !== null) found.set(name, text.slice(start, end).trim());
    name = null;
  };
  for (let position = 0; position < text.length; position += 1) {
    const character = text[position];
    if (inString) {
      if (escaped) escaped = false;
      else if (character === "\\") escaped = true;
      else if (character === '"') {
        inString = false;
        // A name at the top level ends at its closing quote.
        if (depth === 1 && name === null && start < 0) name = JSON.parse(text.slice(keyStart, position + 1));
      }
      continue;
    }
    if (character === '"') {
      inString = true;
      if (depth === 1 && name === null && start < 0) keyStart = position;
    } else if (character === "{" || character === "[") {
      depth += 1;
    } else if (character === "}" || character === "]") {
      if (depth === 1) finish(position);
      depth -= 1;
    } else if (character === ":" && depth === 1) {
      start = position + 1;
    } else if (character === "," && depth === 1) {
      finish(position);
      start = -1;
    }
  }
  return found;
}

/**
 * An SVG element, as `el` makes HTML ones: attributes set as they are, children nodes or
 * strings (text nodes, so a document's field names draw as text whatever they hold).
 */
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}
