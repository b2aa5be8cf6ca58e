// The console's pages. Each renders into `main` from what the API answers, and links to
// the others by the address's hash (see console.js for the routes).
import { APIError, dbPath, del, get, logIn, post, put, request, segment } from "./api.js";
import { bytes, describe, el, indentJSON, members, problem, replace, svg } from "./dom.js";

/** A link to a route of the console. */
export function link(route, ...children) {
  return el("a", { href: "#" + route }, ...children);
}

/** The route of a database, a document, a query page. */
export const routes = {
  database: (db) => "/db/" + encodeURIComponent(db),
  document: (db, id) => `/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(id)}`,
  newDocument: (db) => `/db/${encodeURIComponent(db)}/new`,
  find: (db) => `/db/${encodeURIComponent(db)}/find`,
  views: (db) => `/db/${encodeURIComponent(db)}/views`,
  changes: (db) => `/db/${encodeURIComponent(db)}/changes`,
  security: (db) => `/db/${encodeURIComponent(db)}/security`,
};

/** A button that asks again before it acts, naming what it will do. */
export function confirming(label, question, act) {
  const holder = el("span", { class: "confirming" });
  const ask = () =>
    replace(
      holder,
      el("span", { class: "question" }, question + " "),
      el("button", { class: "danger", type: "button", onclick: act }, label),
      " ",
      el("button", { type: "button", onclick: reset }, "Cancel"),
    );
  const reset = () =>
    replace(holder, el("button", { class: "danger", type: "button", onclick: ask }, label));
  reset();
  return holder;
}

// MARK: - Logging in

export function loginPage(main, { onLogIn }) {
  const name = el("input", { name: "name", autocomplete: "username", required: true });
  const password = el("input", {
    name: "password", type: "password", autocomplete: "current-password", required: true,
  });
  const status = el("div");
  const form = el(
    "form",
    {
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await logIn(name.value, password.value);
          password.value = "";
          await onLogIn();
        } catch (error) {
          replace(status, problem(error));
        }
      },
    },
    el("h1", {}, "Log in"),
    el("label", {}, "Name ", name),
    el("label", {}, "Password ", password),
    el("button", { type: "submit" }, "Log in"),
    status,
  );
  replace(main, form);
  name.focus();
}

// MARK: - Databases

export async function databasesPage(main, { user }) {
  const status = el("div");
  const list = el("div", {}, el("p", { class: "muted" }, "Loading…"));
  const newName = el("input", { name: "database", placeholder: "new database name", required: true });
  const openName = el("input", { name: "open", placeholder: "database name", required: true });
  replace(
    main,
    el("h1", {}, "Databases"),
    status,
    list,
    el(
      "form",
      {
        class: "inline",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await put(dbPath(newName.value));
            location.hash = "#" + routes.database(newName.value);
          } catch (error) {
            replace(status, problem(error));
          }
        },
      },
      newName,
      el("button", { type: "submit" }, "Create database"),
    ),
    el(
      "form",
      {
        class: "inline",
        onsubmit: (event) => {
          event.preventDefault();
          location.hash = "#" + routes.database(openName.value);
        },
      },
      openName,
      el("button", { type: "submit" }, "Open"),
    ),
  );
  let names;
  try {
    names = await get("/_all_dbs");
  } catch (error) {
    // CouchDB lists databases for administrators only: others open one by name.
    replace(list, problem(error), el("p", {}, user.name ? "Open a database by its name below." : "Log in to see more."));
    return;
  }
  if (names.length === 0) {
    replace(list, el("p", { class: "muted" }, "No databases yet."));
    return;
  }
  const infos = await post("/_dbs_info", { keys: names });
  const rows = infos.map(({ key, info, error }) =>
    el(
      "tr",
      { "data-database": key },
      el("td", {}, link(routes.database(key), key)),
      el("td", { class: "number" }, info ? String(info.doc_count) : error || ""),
      el("td", { class: "number" }, info ? bytes(info.sizes && info.sizes.file) : ""),
      el(
        "td",
        {},
        confirming("Delete", `Delete database “${key}” and every document in it?`, async () => {
          try {
            await del(dbPath(key));
            await databasesPage(main, { user });
          } catch (error) {
            replace(status, problem(error));
          }
        }),
      ),
    ),
  );
  replace(
    list,
    el(
      "table",
      { class: "list" },
      el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Documents"), el("th", {}, "Size"), el("th", {}, ""))),
      el("tbody", {}, rows),
    ),
  );
}

// MARK: - A database's documents

const pageSize = 20;

/**
 * The documents of `db` by id, a page at a time: `_all_docs` from a start key, so that a
 * page costs the same on a million documents as on ten; `prefix` narrows to ids that
 * start with it.
 */
export async function databasePage(main, { db, start = null, prefix = "" }) {
  const status = el("div");
  const search = el("input", { name: "prefix", placeholder: "id starts with…", value: prefix });
  const body = el("div", {}, el("p", { class: "muted" }, "Loading…"));
  replace(
    main,
    el("nav", { class: "crumbs" }, link("/", "Databases"), " / ", db),
    el("h1", {}, db),
    el(
      "div",
      { class: "actions" },
      link(routes.newDocument(db), "New document"),
      " · ",
      link(routes.find(db), "Query (Mango)"),
      " · ",
      link(routes.views(db), "Views"),
      " · ",
      link(routes.changes(db), "Changes"),
      " · ",
      link(routes.security(db), "Security"),
    ),
    el(
      "form",
      {
        class: "inline",
        onsubmit: (event) => {
          event.preventDefault();
          location.hash = "#" + routes.database(db) + "?prefix=" + encodeURIComponent(search.value);
        },
      },
      search,
      el("button", { type: "submit" }, "Search"),
    ),
    status,
    body,
  );
  const parameters = new URLSearchParams({ limit: String(pageSize + 1) });
  const from = start !== null ? start : prefix;
  if (from) parameters.set("startkey", JSON.stringify(from));
  if (prefix) parameters.set("endkey", JSON.stringify(prefix + "\ufff0"));
  let answer;
  try {
    answer = await get(dbPath(db, "_all_docs") + "?" + parameters);
  } catch (error) {
    replace(body, problem(error));
    return;
  }
  const rows = answer.rows.slice(0, pageSize);
  const next = answer.rows.length > pageSize ? answer.rows[pageSize].id : null;
  const more = new URLSearchParams();
  if (prefix) more.set("prefix", prefix);
  if (next !== null) more.set("start", next);
  replace(
    body,
    el("p", { class: "muted" }, `${answer.total_rows} documents in all`),
    rows.length === 0
      ? el("p", { class: "muted" }, "No documents here.")
      : el(
          "table",
          { class: "list" },
          el("thead", {}, el("tr", {}, el("th", {}, "Id"), el("th", {}, "Revision"))),
          el(
            "tbody",
            {},
            rows.map((row) =>
              el(
                "tr",
                { "data-id": row.id },
                el("td", {}, link(routes.document(db, row.id), row.id)),
                el("td", { class: "muted" }, row.value.rev),
              ),
            ),
          ),
        ),
    el(
      "div",
      { class: "pager" },
      start !== null ? el("button", { type: "button", onclick: () => history.back() }, "Previous") : null,
      next !== null ? link(routes.database(db) + "?" + more, "Next page") : null,
    ),
  );
}

// MARK: - A document

/**
 * One document as formatted JSON, edited as text and saved with its revision: a conflict
 * is shown and the text kept. The text is never parsed into JavaScript numbers on its way
 * back, so a document keeps integers past 2^53 as written.
 */
export async function documentPage(main, { db, id = null }) {
  const status = el("div");
  const editor = el("textarea", { class: "json", spellcheck: "false", rows: 24, name: "document" });
  const extras = el("div");
  const isNew = id === null;
  replace(
    main,
    el("nav", { class: "crumbs" }, link("/", "Databases"), " / ", link(routes.database(db), db), " / ", isNew ? "new" : id),
    el("h1", {}, isNew ? "New document" : id),
    status,
    editor,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", onclick: () => save() }, isNew ? "Create" : "Save"),
      " ",
      el(
        "button",
        {
          type: "button",
          onclick: () => {
            try {
              JSON.parse(editor.value);
              editor.value = indentJSON(compact(editor.value));
              replace(status);
            } catch (error) {
              replace(status, problem(error));
            }
          },
        },
        "Format",
      ),
      isNew ? null : " ",
      isNew
        ? null
        : confirming("Delete", `Delete document “${id}”?`, async () => {
            try {
              const { _rev } = JSON.parse(editor.value);
              await del(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(_rev));
              location.hash = "#" + routes.database(db);
            } catch (error) {
              replace(status, problem(error));
            }
          }),
    ),
    extras,
  );

  async function load() {
    const text = await get(dbPath(db, segment(id)) + "?conflicts=true", { text: true });
    editor.value = indentJSON(text);
    showExtras(JSON.parse(text));
  }

  async function save() {
    let parsed;
    try {
      parsed = JSON.parse(editor.value);
    } catch (error) {
      replace(status, problem(new Error("The document is not valid JSON: " + error.message)));
      return;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      replace(status, problem(new Error("A document is a JSON object.")));
      return;
    }
    try {
      if (isNew) {
        const answer = parsed._id
          ? await put(dbPath(db, segment(parsed._id)), { body: editor.value, headers: { "Content-Type": "application/json" } })
          : await request("POST", dbPath(db), { body: editor.value, headers: { "Content-Type": "application/json" } });
        location.hash = "#" + routes.document(db, answer.id);
        return;
      }
      const answer = await put(dbPath(db, segment(id)), {
        body: editor.value,
        headers: { "Content-Type": "application/json" },
      });
      replace(status, el("p", { class: "done", role: "status" }, `Saved as revision ${answer.rev}.`));
      await load();
      replace(status, el("p", { class: "done", role: "status" }, `Saved as revision ${answer.rev}.`));
    } catch (error) {
      if (error instanceof APIError && error.status === 409) {
        // The text stays in the editor: nothing the person wrote is lost.
        replace(
          status,
          el(
            "div",
            { class: "problem", role: "alert" },
            el("p", {}, "Conflict: the document changed since you opened it. Your text is kept below; it was not saved."),
            el("button", { type: "button", onclick: () => load().then(() => replace(status)) }, "Discard my text and load the latest"),
          ),
        );
      } else {
        replace(status, problem(error));
      }
    }
  }

  function showExtras(doc) {
    const attachments = Object.entries(doc._attachments || {});
    const file = el("input", { type: "file", name: "attachment" });
    replace(
      extras,
      el("h2", {}, "Attachments"),
      attachments.length === 0
        ? el("p", { class: "muted" }, "None.")
        : el(
            "ul",
            { class: "attachments" },
            attachments.map(([name, stub]) =>
              el(
                "li",
                {},
                // Opened by the server, under its sandboxing policy, outside the console.
                el("a", { href: dbPath(db, segment(id), encodeURIComponent(name)), target: "_blank", rel: "noopener noreferrer" }, name),
                " ",
                el("a", { href: dbPath(db, segment(id), encodeURIComponent(name)), download: name, class: "download" }, "download"),
                el("span", { class: "muted" }, ` ${stub.content_type || ""}, ${bytes(stub.length)}`),
              ),
            ),
          ),
      el(
        "form",
        {
          class: "inline",
          onsubmit: async (event) => {
            event.preventDefault();
            const chosen = file.files[0];
            if (!chosen) return;
            try {
              await put(
                dbPath(db, segment(id), encodeURIComponent(chosen.name)) + "?rev=" + encodeURIComponent(doc._rev),
                { body: chosen, headers: { "Content-Type": chosen.type || "application/octet-stream" } },
              );
              await load();
              replace(status, el("p", { class: "done", role: "status" }, `Attached ${chosen.name}.`));
            } catch (error) {
              replace(status, problem(error));
            }
          },
        },
        file,
        el("button", { type: "submit" }, "Upload"),
      ),
      conflictsSection(doc),
    );
  }

  function conflictsSection(doc) {
    const conflicts = doc._conflicts || [];
    if (conflicts.length === 0) return null;
    return el(
      "section",
      { class: "conflicts" },
      el("h2", {}, `Conflicting revisions (${conflicts.length})`),
      el("p", { class: "muted" }, "The winner is in the editor. Open a losing revision to compare it; deleting one leaves the winner."),
      el(
        "ul",
        {},
        conflicts.map((rev) =>
          el(
            "li",
            {},
            el("code", {}, rev),
            " ",
            opening("Compare", ".side-by-side", async () => {
              const text = await get(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev), { text: true });
              return sideBySide(editor.value, indentJSON(text), rev);
            }),
            " ",
            opening("Merge field by field", ".merge", async () => {
              const winnerText = await get(dbPath(db, segment(id)), { text: true });
              const loserText = await get(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev), { text: true });
              return mergeForm(winnerText, loserText, rev, async (merged, winnerRev) => {
                await put(dbPath(db, segment(id)), { body: merged, headers: { "Content-Type": "application/json" } });
                await del(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev));
                await load();
                replace(status, el("p", { class: "done", role: "status" }, `Merged revision ${rev} into ${winnerRev}'s branch.`));
              });
            }),
            " ",
            confirming("Make this the document", `Write revision ${rev}'s content as the document and delete the revision?`, async () => {
              // Picking a losing revision: its content becomes a new revision of the
              // winner's branch, and its own branch ends.
              try {
                const winner = JSON.parse(await get(dbPath(db, segment(id)), { text: true }));
                const chosen = await get(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev), { text: true });
                const body = chosen.replace(/"_rev"\s*:\s*"[^"]*"/, JSON.stringify("_rev") + ":" + JSON.stringify(winner._rev));
                await put(dbPath(db, segment(id)), { body, headers: { "Content-Type": "application/json" } });
                await del(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev));
                await load();
                replace(status, el("p", { class: "done", role: "status" }, `Revision ${rev} is now the document.`));
              } catch (error) {
                replace(status, problem(error));
              }
            }),
            " ",
            confirming("Delete this revision", `Delete revision ${rev}?`, async () => {
              try {
                await del(dbPath(db, segment(id)) + "?rev=" + encodeURIComponent(rev));
                await load();
              } catch (error) {
                replace(status, problem(error));
              }
            }),
          ),
        ),
      ),
    );
  }

  if (isNew) {
    editor.value = '{\n  "_id": ""\n}';
    return;
  }
  try {
    await load();
  } catch (error) {
    replace(status, problem(error));
  }
}

/**
 * A button that shows what `build` makes below it, in its list item, in place of what it
 * showed before (found by `selector`); a failure is said there.
 */
function opening(label, selector, build) {
  return el(
    "button",
    {
      type: "button",
      onclick: async (event) => {
        const target = event.target.parentElement;
        try {
          const built = await build();
          const shown = target.querySelector(selector);
          if (shown) shown.remove();
          target.append(built);
        } catch (error) {
          target.append(problem(error));
        }
      },
    },
    label,
  );
}

/**
 * The winner (as the editor holds it) beside a losing revision, line by line, each line
 * the other lacks marked: what a person merges by hand in the editor before deleting the
 * loser, or picks whole.
 */
function sideBySide(winnerText, loserText, rev) {
  const winner = winnerText.split("\n");
  const loser = loserText.split("\n");
  const column = (title, lines, other) => {
    const present = new Set(other);
    return el(
      "div",
      { class: "column" },
      el("h3", {}, title),
      el(
        "pre",
        { class: "json" },
        lines.map((line) => el("span", { class: present.has(line) ? "same" : "differs" }, line + "\n")),
      ),
    );
  };
  return el(
    "div",
    { class: "side-by-side" },
    column("The document (winner, as in the editor)", winner, loser),
    column("Revision " + rev, loser, winner),
  );
}

/**
 * The winner and a losing revision field by field: each top-level field the two hold
 * differently is a row with a choice of side (the winner's by default; a side without the
 * field removes it). Saving writes the chosen fields as a new revision of the winner's
 * branch and deletes the losing revision. Values travel as the JSON text the server sent,
 * so numbers past 2^53 stay as written.
 */
function mergeForm(winnerText, loserText, rev, write) {
  const winner = members(winnerText);
  const loser = members(loserText);
  const kept = new Set(["_id", "_rev", "_attachments", "_conflicts", "_deleted_conflicts", "_revisions", "_revs_info"]);
  const names = [...new Set([...winner.keys(), ...loser.keys()])].filter((name) => !kept.has(name));
  const differing = names.filter((name) => compact(winner.get(name) ?? "") !== compact(loser.get(name) ?? ""));
  const status = el("div");
  const value = (text) => (text === undefined ? el("span", { class: "muted" }, "(absent)") : el("code", {}, text));
  const rows = differing.map((name, index) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, name),
      ["winner", "loser"].map((side) => {
        const text = (side === "winner" ? winner : loser).get(name);
        return el(
          "td",
          {},
          el(
            "label",
            {},
            el("input", { type: "radio", name: `merge-${index}`, value: side, checked: side === "winner", "data-field": name }),
            " ",
            value(text),
          ),
        );
      }),
    ),
  );
  const form = el(
    "form",
    {
      class: "merge",
      onsubmit: async (event) => {
        event.preventDefault();
        const chosen = new Map(winner);
        for (const input of form.querySelectorAll("input[type=radio]:checked")) {
          const name = input.getAttribute("data-field");
          const text = (input.value === "winner" ? winner : loser).get(name);
          if (text === undefined) chosen.delete(name);
          else chosen.set(name, text);
        }
        const parts = [...chosen].map(([name, text]) => JSON.stringify(name) + ":" + text);
        try {
          await write("{" + parts.join(",") + "}", JSON.parse(winner.get("_rev")));
        } catch (error) {
          replace(status, problem(error));
        }
      },
    },
    el("h3", {}, `Merge revision ${rev} into the winner`),
    differing.length === 0
      ? el("p", { class: "muted" }, "The two revisions hold the same fields; saving deletes the losing one.")
      : el(
          "table",
          { class: "list merge-fields" },
          el("thead", {}, el("tr", {}, el("th", {}, "Field"), el("th", {}, "Winner"), el("th", {}, "Revision " + rev))),
          el("tbody", {}, rows),
        ),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Save the merge")),
    status,
  );
  return form;
}

/** JSON text without its insignificant white space (strings untouched). */
function compact(text) {
  let out = "";
  let inString = false;
  let escaped = false;
  for (const character of text) {
    if (inString) {
      out += character;
      if (escaped) escaped = false;
      else if (character === "\\") escaped = true;
      else if (character === '"') inString = false;
    } else if (character === '"') {
      inString = true;
      out += character;
    } else if (!/\s/.test(character)) {
      out += character;
    }
  }
  return out;
}

// MARK: - Mango queries

/**
 * A Mango query: results as a table, the plan drawn (the index used, the candidates and
 * why each was not), an index made from the query, and a live mode that runs it again
 * whenever the database changes.
 */
export async function findPage(main, { db }) {
  const query = el("textarea", { class: "json", rows: 8, name: "query", spellcheck: "false" });
  query.value = '{\n  "selector": {},\n  "limit": 25\n}';
  const status = el("div");
  const results = el("div");
  const plan = el("div");
  const live = el("input", { type: "checkbox", name: "live" });
  const liveState = el("p", { class: "muted live-state", role: "status" });
  let watching = null;

  replace(
    main,
    el("nav", { class: "crumbs" }, link("/", "Databases"), " / ", link(routes.database(db), db), " / query"),
    el("h1", {}, "Query ", db),
    query,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", onclick: () => run() }, "Run"),
      " ",
      el("button", { type: "button", onclick: () => explain() }, "Explain"),
      " ",
      el("button", { type: "button", onclick: () => makeIndex() }, "Create an index for this query"),
      " ",
      el("label", {}, live, " Live"),
    ),
    liveState,
    status,
    plan,
    results,
  );

  live.addEventListener("change", () => {
    if (live.checked) watch();
    else if (watching) watching.abort();
  });
  // A page left behind stops watching.
  window.addEventListener("hashchange", () => watching && watching.abort(), { once: true });

  function parsedQuery() {
    const parsed = JSON.parse(query.value);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error("A query is a JSON object with a selector.");
    }
    return parsed;
  }

  async function run() {
    try {
      const answer = await post(dbPath(db, "_find"), parsedQuery());
      replace(status, answer.warning ? el("p", { class: "warning" }, answer.warning) : null);
      replace(results, table(answer.docs));
    } catch (error) {
      replace(status, problem(error));
    }
  }

  async function explain() {
    try {
      const answer = await post(dbPath(db, "_explain"), parsedQuery());
      replace(plan, drawPlan(answer));
    } catch (error) {
      replace(status, problem(error));
    }
  }

  async function makeIndex() {
    try {
      const parsed = parsedQuery();
      const fields = [];
      for (const entry of parsed.sort || []) {
        const field = typeof entry === "string" ? entry : Object.keys(entry)[0];
        if (!fields.includes(field)) fields.push(field);
      }
      for (const field of Object.keys(parsed.selector || {})) {
        if (!field.startsWith("$") && !fields.includes(field)) fields.push(field);
      }
      if (fields.length === 0) throw new Error("The query names no field to index.");
      const answer = await post(dbPath(db, "_index"), { index: { fields }, type: "json" });
      replace(status, el("p", { class: "done", role: "status" }, `Index ${answer.name} ${answer.result} on ${fields.join(", ")}.`));
    } catch (error) {
      replace(status, problem(error));
    }
  }

  async function watch() {
    watching = new AbortController();
    const signal = watching.signal;
    // The sequence first, then the results: a change after this point runs them again.
    let since;
    try {
      since = (await get(dbPath(db, "_changes") + "?since=now")).last_seq;
    } catch (error) {
      replace(status, problem(error));
      live.checked = false;
      return;
    }
    await run();
    liveState.textContent = "Live: the results follow the database's changes.";
    signal.addEventListener("abort", () => (liveState.textContent = ""));
    while (!signal.aborted && document.body.contains(results)) {
      try {
        const answer = await get(
          dbPath(db, "_changes") + `?feed=longpoll&timeout=25000&limit=1&since=${encodeURIComponent(since)}`,
          { signal },
        );
        since = answer.last_seq;
        if (answer.results.length > 0) await run();
      } catch (error) {
        if (signal.aborted) return;
        replace(status, problem(error));
        live.checked = false;
        return;
      }
    }
  }
}

/** Documents as a table: a column per top-level field (the first 12 met), values as JSON. */
function table(docs) {
  if (docs.length === 0) return el("p", { class: "muted" }, "No documents match.");
  const columns = [];
  for (const doc of docs) {
    for (const key of Object.keys(doc)) {
      if (!columns.includes(key) && columns.length < 12) columns.push(key);
    }
  }
  return el(
    "table",
    { class: "list results" },
    el("thead", {}, el("tr", {}, columns.map((column) => el("th", {}, column)))),
    el(
      "tbody",
      {},
      docs.map((doc) =>
        el(
          "tr",
          {},
          columns.map((column) => {
            const value = doc[column];
            return el("td", {}, value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));
          }),
        ),
      ),
    ),
  );
}

/** `_explain`'s answer as a picture: the index chosen, then every candidate and its reasons. */
function drawPlan(answer) {
  const index = answer.index || {};
  const fields = (index.def && index.def.fields ? index.def.fields : []).map((field) =>
    typeof field === "string" ? field : Object.keys(field)[0],
  );
  const candidates = answer.index_candidates || [];
  return el(
    "section",
    { class: "plan" },
    el("h2", {}, "Plan"),
    planPicture(answer, fields, candidates),
    el(
      "div",
      { class: "chosen" },
      el("strong", {}, "Index used: "),
      index.name ? `${index.ddoc ? index.ddoc + " / " : ""}${index.name} (${index.type})` : "none",
      fields.length ? el("span", { class: "muted" }, " on " + fields.join(", ")) : null,
      answer.covering ? el("span", { class: "badge" }, "covering") : null,
    ),
    candidates.length
      ? el(
          "ol",
          { class: "candidates" },
          candidates.map((candidate) => {
            const analysis = candidate.analysis || {};
            const reasons = (analysis.reasons || []).map((reason) => reason.name).join(", ");
            const name = candidate.index ? candidate.index.name : "?";
            return el(
              "li",
              {},
              el("strong", {}, name),
              ` (${candidate.index ? candidate.index.type : ""}): `,
              analysis.usable ? "usable" : "not usable",
              reasons ? el("span", { class: "muted" }, ` because ${reasons}`) : null,
              analysis.ranking !== undefined ? el("span", { class: "muted" }, `, ranked ${analysis.ranking}`) : null,
            );
          }),
        )
      : el("p", { class: "muted" }, "No other index was a candidate."),
  );
}

/** `text` cut to `length` characters, an ellipsis marking the cut. */
const cut = (text, length) => (text.length > length ? text.slice(0, length - 1) + "…" : text);

/**
 * The plan as a picture: the selector's fields, the index read (its key range, or the
 * whole of `_all_docs`), whether documents are read or the index covers the query, and the
 * page kept; below the index, each other candidate with why it was not chosen.
 */
function planPicture(answer, fields, candidates) {
  const index = answer.index || {};
  const hints = (answer.selector_hints || [])[0] || {};
  const named = [...(hints.indexable_fields || []), ...(hints.unindexable_fields || [])];
  const options = answer.opts || {};
  const range = answer.mrargs
    ? `${JSON.stringify(answer.mrargs.start_key)} → ${JSON.stringify(answer.mrargs.end_key)}`
    : "every id";
  const special = index.type === "special";
  const stages = [
    { title: "Selector", lines: [named.length ? cut(named.join(", "), 26) : "(no fields)"] },
    {
      title: special ? "All documents" : "Index " + cut(index.name || "none", 18),
      lines: [special ? "by _id, in order" : "on " + cut(fields.join(", ") || "?", 23), cut(range, 26)],
      chosen: true,
    },
    answer.covering
      ? { title: "Covered", lines: ["no document read:", "the index holds the fields"] }
      : { title: "Read documents", lines: ["each key's document,", "matched to the selector"] },
    {
      title: "Page",
      lines: [`skip ${options.skip ?? 0}, limit ${options.limit ?? "none"}`, options.sort && Object.keys(options.sort).length ? "sorted" : "in index order"],
    },
  ];
  const width = 190;
  const gap = 34;
  const height = 66;
  const others = candidates.slice(0, 4);
  const total = stages.length * width + (stages.length - 1) * gap;
  const below = others.length ? 30 + others.length * 24 : 0;
  const picture = svg("svg", {
    class: "plan-picture",
    viewBox: `0 0 ${total + 2} ${height + below + 2}`,
    role: "img",
    "aria-label": stages.map((stage) => stage.title).join(", then "),
  });
  stages.forEach((stage, position) => {
    const x = 1 + position * (width + gap);
    picture.append(
      svg("rect", { x, y: 1, width, height, rx: 8, class: stage.chosen ? "stage picked" : "stage" }),
      svg("text", { x: x + 10, y: 21, class: "title" }, stage.title),
      ...stage.lines.map((line, number) => svg("text", { x: x + 10, y: 39 + number * 16, class: "line" }, line)),
    );
    if (position > 0) {
      const from = x - gap + 4;
      picture.append(
        svg("line", { x1: from, y1: 1 + height / 2, x2: x - 6, y2: 1 + height / 2, class: "arrow" }),
        svg("path", { d: `M ${x - 12} ${height / 2 - 4} L ${x - 4} ${1 + height / 2} L ${x - 12} ${height / 2 + 6} Z`, class: "head" }),
      );
    }
  });
  if (others.length) {
    const x = 1 + width + gap;
    picture.append(svg("text", { x, y: height + 24, class: "line" }, "Other candidates:"));
    others.forEach((candidate, number) => {
      const analysis = candidate.analysis || {};
      const reasons = (analysis.reasons || []).map((reason) => reason.name).join(", ");
      const name = candidate.index ? candidate.index.name : "?";
      const y = height + 32 + number * 24;
      picture.append(
        svg("rect", { x, y, width: width * 2 + gap, height: 20, rx: 5, class: analysis.usable ? "candidate usable" : "candidate" }),
        svg("text", { x: x + 8, y: y + 14, class: "line" },
          cut(`${name}: ${analysis.usable ? "usable" : "not usable"}${reasons ? " (" + reasons + ")" : ""}${analysis.usable ? ", ranked " + analysis.ranking : ""}`, 60)),
      );
    });
  }
  return picture;
}
