// The console's entry: who is logged in, the header, and the routes (the address's hash):
//   #/                    databases
//   #/login               log in
//   #/db/{db}             a database's documents (?prefix=, ?start=)
//   #/db/{db}/new         a new document
//   #/db/{db}/doc/{id}    a document
//   #/db/{db}/find        a Mango query
//   #/db/{db}/views       design documents and their views
//   #/db/{db}/changes     a live tail of _changes (?from=start)
//   #/db/{db}/security    the database's admins and members
//   #/replication         replications: start, list, progress
//   #/users               _users, for administrators
import { logOut, session } from "./api.js";
import { el, problem, replace } from "./dom.js";
import { changesPage, replicationPage, securityPage, usersPage, viewsPage } from "./more.js";
import { databasePage, databasesPage, documentPage, findPage, link, loginPage } from "./pages.js";

const top = document.getElementById("top");
const main = document.getElementById("main");
let user = { name: null, roles: [] };

async function refreshUser() {
  try {
    user = await session();
  } catch {
    user = { name: null, roles: [] };
  }
  replace(
    top,
    el(
      "nav",
      { class: "sections" },
      el("a", { href: "#/", class: "brand" }, "Settee"),
      link("/", "Databases"),
      link("/replication", "Replication"),
      link("/users", "Users"),
    ),
    el(
      "span",
      { class: "who", "data-user": user.name || "" },
      user.name
        ? [
            "Logged in as ",
            el("strong", {}, user.name),
            user.roles.length ? ` (${user.roles.join(", ")})` : "",
            " ",
            el(
              "button",
              {
                type: "button",
                onclick: async () => {
                  await logOut();
                  await refreshUser();
                  location.hash = "#/login";
                },
              },
              "Log out",
            ),
          ]
        : ["Not logged in ", link("/login", "Log in")],
    ),
  );
}

async function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = hash.split("?");
  const parameters = new URLSearchParams(search);
  const parts = path.split("/").filter((part) => part !== "").map(decodeURIComponent);
  try {
    if (parts.length === 0) return await databasesPage(main, { user });
    if (parts[0] === "login") {
      return loginPage(main, {
        onLogIn: async () => {
          await refreshUser();
          location.hash = "#/";
        },
      });
    }
    if (parts[0] === "replication") return await replicationPage(main);
    if (parts[0] === "users") return await usersPage(main);
    if (parts[0] === "db" && parts.length >= 2) {
      const db = parts[1];
      if (parts.length === 2) {
        return await databasePage(main, {
          db,
          start: parameters.has("start") ? parameters.get("start") : null,
          prefix: parameters.get("prefix") || "",
        });
      }
      if (parts[2] === "new") return await documentPage(main, { db });
      if (parts[2] === "find") return await findPage(main, { db });
      if (parts[2] === "views") return await viewsPage(main, { db });
      if (parts[2] === "changes") return await changesPage(main, { db, fromStart: parameters.get("from") === "start" });
      if (parts[2] === "security") return await securityPage(main, { db });
      if (parts[2] === "doc" && parts.length >= 4) {
        return await documentPage(main, { db, id: parts.slice(3).join("/") });
      }
    }
    replace(main, el("h1", {}, "Not found"), el("p", {}, "No page at this address. "), link("/", "Databases"));
  } catch (error) {
    replace(main, problem(error));
  }
}

window.addEventListener("hashchange", route);
await refreshUser();
await route();
