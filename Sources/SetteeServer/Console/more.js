// The console's pages beyond documents and queries: views, the changes feed, a
// database's security, replication, and users.
import { APIError, dbPath, del, get, post, put, segment } from "./api.js";
import { el, members, problem, replace } from "./dom.js";
import { confirming, link, routes } from "./pages.js";

/** Names or roles typed as a comma-separated list. */
const list = (text) => text.split(",").map((part) => part.trim()).filter((part) => part !== "");

function crumbs(db, here) {
  return el("nav", { class: "crumbs" }, link("/", "Databases"), " / ", link(routes.database(db), db), " / " + here);
}

/** An AbortController that ends when the person leaves the page. */
function whilePageShown() {
  const controller = new AbortController();
  window.addEventListener("hashchange", () => controller.abort(), { once: true });
  return controller.signal;
}

// MARK: - Views

/**
 * The design documents of `db` and their views; a view runs with CouchDB's parameters
 * (keys as JSON, reduce, group level, limit, documents included) into a table. A view's
 * map and reduce are edited in a form of their own (a new view too), saved into its
 * design document; JavaScript that does not compile comes back as the save's error.
 */
export async function viewsPage(main, { db }) {
  const status = el("div");
  const designs = el("div", {}, el("p", { class: "muted" }, "Loading…"));
  const results = el("div");
  const editing = el("div");
  replace(main, crumbs(db, "views"), el("h1", {}, "Views of ", db), status, designs, results);
  let answer;
  try {
    answer = await get(dbPath(db, "_design_docs") + "?include_docs=true");
  } catch (error) {
    replace(designs, problem(error));
    return;
  }
  const choices = [];
  for (const row of answer.rows) {
    for (const name of Object.keys((row.doc && row.doc.views) || {})) {
      choices.push({ design: row.id, name, reduce: Boolean(row.doc.views[name].reduce) });
    }
  }
  const newView = el("button", { type: "button", onclick: () => replace(editing, viewEditor(db, null, () => viewsPage(main, { db }))) }, "New view");
  if (answer.rows.length === 0) {
    replace(designs, el("p", { class: "muted" }, "No design documents yet."), newView, editing);
    return;
  }
  const view = el(
    "select",
    { name: "view" },
    choices.map((choice, index) => el("option", { value: String(index) }, `${choice.design} / ${choice.name}`)),
  );
  const fields = {};
  const input = (name, placeholder) => (fields[name] = el("input", { name, placeholder }));
  const checkbox = (name) => (fields[name] = el("input", { type: "checkbox", name }));
  replace(
    designs,
    el(
      "ul",
      { class: "designs" },
      answer.rows.map((row) =>
        el("li", {}, link(routes.document(db, row.id), row.id), el("span", { class: "muted" }, ` (${Object.keys((row.doc && row.doc.views) || {}).length} views)`)),
      ),
    ),
    choices.length === 0
      ? el("p", { class: "muted" }, "No views in them.")
      : el(
          "form",
          {
            class: "view-form",
            onsubmit: async (event) => {
              event.preventDefault();
              const choice = choices[Number(view.value)];
              const parameters = new URLSearchParams();
              for (const name of ["key", "startkey", "endkey"]) {
                const text = fields[name].value.trim();
                if (!text) continue;
                try {
                  JSON.parse(text);
                } catch {
                  replace(status, problem(new Error(`${name} must be JSON (a string is written "in quotes").`)));
                  return;
                }
                parameters.set(name, text);
              }
              if (fields.limit.value.trim()) parameters.set("limit", fields.limit.value.trim());
              if (fields.group_level.value.trim()) parameters.set("group_level", fields.group_level.value.trim());
              if (choice.reduce) parameters.set("reduce", fields.reduce.checked ? "true" : "false");
              for (const name of ["descending", "include_docs"]) {
                if (fields[name].checked) parameters.set(name, "true");
              }
              try {
                const rows = await get(
                  dbPath(db, "_design", encodeURIComponent(choice.design.slice(8)), "_view", encodeURIComponent(choice.name)) + "?" + parameters,
                );
                replace(status);
                replace(results, viewTable(rows));
              } catch (error) {
                replace(status, problem(error));
              }
            },
          },
          el("label", {}, "View ", view),
          el("div", { class: "parameters" },
            el("label", {}, "key ", input("key", '"a" or 1 or ["a", 2]')),
            el("label", {}, "startkey ", input("startkey", "JSON")),
            el("label", {}, "endkey ", input("endkey", "JSON")),
            el("label", {}, "limit ", input("limit", "rows")),
            el("label", {}, "group_level ", input("group_level", "with reduce")),
            el("label", {}, checkbox("reduce"), " reduce"),
            el("label", {}, checkbox("descending"), " descending"),
            el("label", {}, checkbox("include_docs"), " include_docs"),
          ),
          el("button", { type: "submit" }, "Run view"),
          " ",
          el("button", { type: "button", onclick: () => replace(editing, viewEditor(db, choices[Number(view.value)], () => viewsPage(main, { db }))) }, "Edit this view"),
        ),
    newView,
    editing,
  );
  if (fields.reduce) fields.reduce.checked = true;
}

/** The reduces CouchDB runs natively, offered by name beside a JavaScript reduce. */
const builtInReduces = ["_count", "_sum", "_stats", "_approx_count_distinct"];

/**
 * A view's map and reduce as JavaScript in text boxes, saved into its design document (a
 * new one for a new view): the server compiles them and a compilation error is shown with
 * the text kept. The rest of the design document is written back as the server sent it.
 */
function viewEditor(db, choice, saved) {
  const status = el("div");
  const designName = el("input", { name: "design", placeholder: "app", value: choice ? choice.design.slice(8) : "" });
  const viewName = el("input", { name: "view-name", placeholder: "by_type", value: choice ? choice.name : "" });
  const map = el("textarea", { class: "json", name: "map", rows: 8, spellcheck: "false" });
  const reduce = el("textarea", { class: "json", name: "reduce-source", rows: 4, spellcheck: "false", placeholder: "none, " + builtInReduces.join(", ") + " or a JavaScript function" });
  map.value = "function (doc) {\n  emit(doc._id, null);\n}";
  let designText = null;
  async function loadDesign() {
    try {
      designText = await get(dbPath(db, "_design", encodeURIComponent(designName.value.trim())), { text: true });
    } catch (error) {
      if (error instanceof APIError && error.status === 404) designText = null;
      else throw error;
    }
  }
  if (choice) {
    (async () => {
      try {
        await loadDesign();
        const definition = JSON.parse(members(designText).get("views") ?? "{}")[choice.name] || {};
        map.value = definition.map || "";
        reduce.value = definition.reduce || "";
      } catch (error) {
        replace(status, problem(error));
      }
    })();
  }
  return el(
    "form",
    {
      class: "view-editor",
      onsubmit: async (event) => {
        event.preventDefault();
        const design = designName.value.trim();
        const name = viewName.value.trim();
        if (!design || !name) {
          replace(status, problem(new Error("A view needs its design document's name and its own.")));
          return;
        }
        try {
          await loadDesign();
          const kept = designText === null ? new Map([["_id", JSON.stringify("_design/" + design)]]) : members(designText);
          const views = kept.has("views") ? JSON.parse(kept.get("views")) : {};
          views[name] = { map: map.value };
          if (reduce.value.trim()) views[name].reduce = reduce.value.trim();
          kept.set("views", JSON.stringify(views));
          if (!kept.has("language")) kept.set("language", JSON.stringify("javascript"));
          const body = "{" + [...kept].map(([member, text]) => JSON.stringify(member) + ":" + text).join(",") + "}";
          await put(dbPath(db, "_design", encodeURIComponent(design)), { body, headers: { "Content-Type": "application/json" } });
          await saved();
        } catch (error) {
          // The text stays as written: nothing typed is lost.
          replace(status, problem(error));
        }
      },
    },
    el("h2", {}, choice ? `Edit ${choice.design} / ${choice.name}` : "New view"),
    el("div", { class: "parameters" }, el("label", {}, "_design/ ", designName), el("label", {}, "view ", viewName)),
    el("label", { class: "block" }, "map", map),
    el("label", { class: "block" }, "reduce", reduce),
    el("button", { type: "submit" }, "Save view"),
    status,
  );
}

function viewTable(answer) {
  const rows = answer.rows || [];
  const summary = answer.total_rows !== undefined ? `${rows.length} of ${answer.total_rows} rows` : `${rows.length} rows`;
  return el(
    "div",
    {},
    el("p", { class: "muted" }, summary),
    el(
      "table",
      { class: "list view-rows" },
      el("thead", {}, el("tr", {}, el("th", {}, "key"), el("th", {}, "value"), el("th", {}, "id"), rows.some((row) => row.doc) ? el("th", {}, "doc") : null)),
      el(
        "tbody",
        {},
        rows.map((row) =>
          el(
            "tr",
            {},
            el("td", {}, JSON.stringify(row.key)),
            el("td", {}, JSON.stringify(row.value)),
            el("td", {}, row.id === undefined ? "" : row.id),
            row.doc !== undefined ? el("td", {}, JSON.stringify(row.doc)) : null,
          ),
        ),
      ),
    ),
  );
}

// MARK: - Changes

/** A live tail of `_changes`: newest first, the last 200 kept, from now or from the start. */
export async function changesPage(main, { db, fromStart = false }) {
  const status = el("div");
  const rows = el("tbody");
  const state = el("p", { class: "muted live-state", role: "status" });
  replace(
    main,
    crumbs(db, "changes"),
    el("h1", {}, "Changes of ", db),
    el("div", { class: "actions" }, fromStart ? link(routes.changes(db), "Only new changes") : link(routes.changes(db) + "?from=start", "From the start")),
    state,
    status,
    el("table", { class: "list changes" }, el("thead", {}, el("tr", {}, el("th", {}, "seq"), el("th", {}, "id"), el("th", {}, "rev"), el("th", {}, ""))), rows),
  );
  const signal = whilePageShown();
  let since;
  try {
    since = fromStart ? 0 : (await get(dbPath(db, "_changes") + "?since=now")).last_seq;
  } catch (error) {
    replace(status, problem(error));
    return;
  }
  state.textContent = "Live: following the changes.";
  follow();

  // Not awaited: the page is shown while it follows.
  async function follow() {
    while (!signal.aborted) {
      try {
        const answer = await get(
          dbPath(db, "_changes") + `?feed=longpoll&timeout=25000&limit=100&since=${encodeURIComponent(since)}`,
          { signal },
        );
        since = answer.last_seq;
        for (const change of answer.results) {
          rows.prepend(
            el(
              "tr",
              { "data-id": change.id },
              el("td", { class: "muted" }, String(change.seq).split("-")[0]),
              el("td", {}, change.deleted ? change.id : link(routes.document(db, change.id), change.id)),
              el("td", { class: "muted" }, change.changes.map((entry) => entry.rev).join(", ")),
              el("td", {}, change.deleted ? "deleted" : ""),
            ),
          );
        }
        while (rows.children.length > 200) rows.lastElementChild.remove();
      } catch (error) {
        if (signal.aborted) return;
        replace(status, problem(error));
        state.textContent = "";
        return;
      }
    }
  }
}

// MARK: - Security

/** A database's `_security`: its admins and members, by name and by role. */
export async function securityPage(main, { db }) {
  const status = el("div");
  const fields = {};
  const field = (group, kind) =>
    (fields[`${group}.${kind}`] = el("input", { name: `${group}-${kind}`, placeholder: "comma-separated", size: 40 }));
  // Enabled once the current object is loaded, so that nothing typed is overwritten.
  const save = el("button", { type: "submit", disabled: true }, "Save security");
  const form = el(
    "form",
    {
      class: "security",
      onsubmit: async (event) => {
        event.preventDefault();
        const security = {};
        for (const group of ["admins", "members"]) {
          security[group] = { names: list(fields[`${group}.names`].value), roles: list(fields[`${group}.roles`].value) };
        }
        try {
          await put(dbPath(db, "_security"), { json: security });
          replace(status, el("p", { class: "done", role: "status" }, "Security saved."));
        } catch (error) {
          replace(status, problem(error));
        }
      },
    },
    el("h2", {}, "Admins"),
    el("label", {}, "Names ", field("admins", "names")),
    el("label", {}, "Roles ", field("admins", "roles")),
    el("h2", {}, "Members"),
    el("p", { class: "muted" }, "A new database is for administrators only (the role _admin). With no member names or roles at all, every user may read and write its documents."),
    el("label", {}, "Names ", field("members", "names")),
    el("label", {}, "Roles ", field("members", "roles")),
    el("div", { class: "actions" }, save),
  );
  replace(main, crumbs(db, "security"), el("h1", {}, "Security of ", db), status, form);
  try {
    const security = await get(dbPath(db, "_security"));
    for (const group of ["admins", "members"]) {
      for (const kind of ["names", "roles"]) {
        fields[`${group}.${kind}`].value = ((security[group] || {})[kind] || []).join(", ");
      }
    }
    save.disabled = false;
  } catch (error) {
    replace(status, problem(error));
  }
}

// MARK: - Replication

/**
 * Replications: a form that starts one (a `_replicator` document, so that it runs across
 * restarts and is listed with its state), the documents and the running jobs, and a
 * picture per job of the documents read and written over time, updated every second
 * while the page is shown.
 */
export async function replicationPage(main) {
  const status = el("div");
  const jobs = el("div");
  const documents = el("div");
  const source = el("input", { name: "source", placeholder: "database name or URL", required: true, size: 36 });
  const target = el("input", { name: "target", placeholder: "database name or URL", required: true, size: 36 });
  const continuous = el("input", { type: "checkbox", name: "continuous" });
  const create = el("input", { type: "checkbox", name: "create_target" });
  replace(
    main,
    el("h1", {}, "Replication"),
    status,
    el(
      "form",
      {
        class: "replication",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            try {
              await put("/_replicator");
            } catch (error) {
              if (!(error instanceof APIError && error.status === 412)) throw error;
            }
            const answer = await post("/_replicator", {
              source: source.value, target: target.value,
              continuous: continuous.checked, create_target: create.checked,
            });
            replace(status, el("p", { class: "done", role: "status" }, `Replication ${answer.id} started.`));
            await refresh();
          } catch (error) {
            replace(status, problem(error));
          }
        },
      },
      el("label", {}, "From ", source),
      el("label", {}, "to ", target),
      el("label", {}, continuous, " continuous"),
      el("label", {}, create, " create the target"),
      el("button", { type: "submit" }, "Start replication"),
    ),
    el("h2", {}, "Running jobs"),
    jobs,
    el("h2", {}, "Replication documents"),
    documents,
  );
  const history = new Map();
  const signal = whilePageShown();

  async function refresh() {
    try {
      const [running, scheduled] = await Promise.all([get("/_scheduler/jobs"), get("/_scheduler/docs")]);
      const now = Date.now();
      replace(
        jobs,
        running.jobs.length === 0
          ? el("p", { class: "muted" }, "None running.")
          : running.jobs.map((job) => {
              const points = history.get(job.id) || [];
              points.push({ time: now, read: job.info.docs_read || 0, written: job.info.docs_written || 0 });
              while (points.length > 120) points.shift();
              history.set(job.id, points);
              return el(
                "div",
                { class: "job", "data-job": job.id },
                el("div", {}, el("strong", {}, `${job.source} → ${job.target}`), el("span", { class: "muted" }, ` ${job.history[0] ? job.history[0].type : ""}`)),
                el("div", { class: "counts" }, `read ${job.info.docs_read || 0}, written ${job.info.docs_written || 0}`, job.info.error ? ` · ${job.info.error}` : ""),
                progressPicture(points),
              );
            }),
      );
      replace(
        documents,
        scheduled.docs.length === 0
          ? el("p", { class: "muted" }, "None.")
          : el(
              "table",
              { class: "list" },
              el("thead", {}, el("tr", {}, el("th", {}, "Document"), el("th", {}, "From"), el("th", {}, "To"), el("th", {}, "State"), el("th", {}, "Written"), el("th", {}, ""))),
              el(
                "tbody",
                {},
                scheduled.docs.map((doc) =>
                  el(
                    "tr",
                    { "data-replication": doc.doc_id },
                    el("td", {}, doc.doc_id),
                    el("td", {}, String(doc.source || "")),
                    el("td", {}, String(doc.target || "")),
                    el("td", { class: "state" }, String(doc.state || "")),
                    el("td", { class: "number" }, String((doc.info && doc.info.docs_written) || 0)),
                    el(
                      "td",
                      {},
                      confirming("Remove", `Remove replication ${doc.doc_id}?`, async () => {
                        try {
                          const current = await get("/_replicator/" + segment(doc.doc_id));
                          await del("/_replicator/" + segment(doc.doc_id) + "?rev=" + encodeURIComponent(current._rev));
                          await refresh();
                        } catch (error) {
                          replace(status, problem(error));
                        }
                      }),
                    ),
                  ),
                ),
              ),
            ),
      );
    } catch (error) {
      replace(status, problem(error));
    }
  }

  await refresh();
  follow();

  // Not awaited: the page is shown while it refreshes, once a second.
  async function follow() {
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (signal.aborted || !document.body.contains(jobs)) return;
      await refresh();
    }
  }
}

/** Documents read and written over time, as two lines drawn in SVG (no markup from data). */
function progressPicture(points) {
  const namespace = "http://www.w3.org/2000/svg";
  const width = 360;
  const height = 60;
  const svg = document.createElementNS(namespace, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "progress");
  svg.setAttribute("role", "img");
  const last = points[points.length - 1];
  svg.setAttribute("aria-label", `documents read ${last.read}, written ${last.written}`);
  const frame = document.createElementNS(namespace, "rect");
  frame.setAttribute("class", "frame");
  frame.setAttribute("width", String(width));
  frame.setAttribute("height", String(height));
  svg.append(frame);
  const top = Math.max(1, ...points.map((point) => Math.max(point.read, point.written)));
  const start = points[0].time;
  const span = Math.max(1, last.time - start);
  for (const [key, className] of [["read", "read"], ["written", "written"]]) {
    const line = document.createElementNS(namespace, "polyline");
    line.setAttribute("class", className);
    const place = (point) => [((point.time - start) / span) * (width - 4) + 2, height - (point[key] / top) * (height - 4) - 2];
    line.setAttribute("points", points.map((point) => place(point).join(",")).join(" "));
    svg.append(line);
    // The latest count as a dot, so that a job just started shows too.
    const [x, y] = place(last);
    const dot = document.createElementNS(namespace, "circle");
    dot.setAttribute("class", className);
    dot.setAttribute("cx", String(x));
    dot.setAttribute("cy", String(y));
    dot.setAttribute("r", "2.5");
    svg.append(dot);
  }
  return svg;
}

// MARK: - Users

/** `_users`, for administrators: users listed with their roles, created, and deleted. */
export async function usersPage(main) {
  const status = el("div");
  const users = el("div", {}, el("p", { class: "muted" }, "Loading…"));
  const name = el("input", { name: "user-name", required: true, autocomplete: "off" });
  const password = el("input", { name: "user-password", type: "password", required: true, autocomplete: "new-password" });
  const roles = el("input", { name: "user-roles", placeholder: "comma-separated" });
  replace(
    main,
    el("h1", {}, "Users"),
    status,
    users,
    el(
      "form",
      {
        class: "inline",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await put("/_users/" + encodeURIComponent("org.couchdb.user:" + name.value), {
              json: { _id: "org.couchdb.user:" + name.value, name: name.value, password: password.value, roles: list(roles.value), type: "user" },
            });
            password.value = "";
            replace(status, el("p", { class: "done", role: "status" }, `User ${name.value} created.`));
            await show();
          } catch (error) {
            replace(status, problem(error));
          }
        },
      },
      el("label", {}, "Name ", name),
      el("label", {}, "Password ", password),
      el("label", {}, "Roles ", roles),
      el("button", { type: "submit" }, "Create user"),
    ),
  );

  async function show() {
    let answer;
    try {
      answer = await get("/_users/_all_docs?include_docs=true");
    } catch (error) {
      replace(users, problem(error));
      return;
    }
    const rows = answer.rows.filter((row) => !row.id.startsWith("_design/"));
    replace(
      users,
      rows.length === 0
        ? el("p", { class: "muted" }, "No users.")
        : el(
            "table",
            { class: "list" },
            el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Roles"), el("th", {}, ""))),
            el(
              "tbody",
              {},
              rows.map((row) =>
                el(
                  "tr",
                  { "data-user": row.doc.name },
                  el("td", {}, row.doc.name),
                  el("td", {}, (row.doc.roles || []).join(", ")),
                  el(
                    "td",
                    {},
                    confirming("Delete", `Delete user ${row.doc.name}?`, async () => {
                      try {
                        await del("/_users/" + encodeURIComponent(row.id) + "?rev=" + encodeURIComponent(row.value.rev));
                        await show();
                      } catch (error) {
                        replace(status, problem(error));
                      }
                    }),
                  ),
                ),
              ),
            ),
          ),
    );
  }
  await show();
}

