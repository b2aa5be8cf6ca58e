"""The web console at /_utils/ in a real browser: Debian's chromium, driven by Playwright for
Python, against `settee serve` on a free loopback port with a new file and an administrator.
`.ci/run` installs both and runs this file with the built binary:

    python console_test.py path/to/settee

Everything the console does goes through the HTTP API under the person's own session, so
each test also checks what the server holds afterwards, through the API, not the page.
"""

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from playwright.sync_api import expect, sync_playwright

SETTEE = None
ADMIN, PASSWORD = "admin", "secret-for-console"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class Server:
    """`settee serve --port 0` with an administrator; `url` once it listens."""

    def __init__(self):
        self.directory = tempfile.TemporaryDirectory()
        self.process = subprocess.Popen(
            [SETTEE, "--db", os.path.join(self.directory.name, "console.db"), "serve",
             "--port", "0", "--log-level", "none", "--admin", ADMIN],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "SETTEE_ADMIN_PASSWORD": PASSWORD})
        self.url = json.loads(self.process.stdout.readline())["url"].rstrip("/")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.directory.cleanup()

    def call(self, method, path, body=None, user=(ADMIN, PASSWORD), headers=None, raw=None):
        """The API as a client other than the page sees it: (status, headers, JSON body);
        `raw` sends bytes as they are."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if user:
            token = base64.b64encode(("%s:%s" % user).encode()).decode()
            request.add_header("Authorization", "Basic " + token)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
                return response.status, response.headers, text
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()


class ConsoleTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.playwright = sync_playwright().start()
        cls.browser = cls.playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"] if os.geteuid() == 0 else [])

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.playwright.stop()
        cls.server.stop()

    def setUp(self):
        self.context = self.browser.new_context()
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        # Script errors, refused resources (the CSP) and dialogs fail the test: the console
        # opens none, and a document's content must never run.
        self.errors = []
        self.page.on("pageerror", lambda error: self.errors.append("page error: %s" % error))
        # (Chromium logs every refused request as "Failed to load resource"; the console
        # shows refusals on purpose, so those are kept apart, as the answers themselves.)
        self.page.on("console", lambda message: message.type == "error"
                     and not message.text.startswith("Failed to load resource")
                     and self.errors.append("console: %s" % message.text))
        self.refusals = []
        self.page.on("response", lambda response: response.status >= 400
                     and self.refusals.append("%d %s %s" % (
                         response.status, response.request.method, response.url)))
        self.page.on("dialog", lambda dialog: (self.errors.append("dialog: %s" % dialog.message),
                                               dialog.dismiss()))
        # What hostile content would run if it ever became markup: it calls __ran.
        self.page.add_init_script("window.__ran = []")

    def tearDown(self):
        ran = self.page.evaluate("() => window.__ran || []") if not self.page.is_closed() else []
        self.context.close()
        self.assertEqual(ran, [], "hostile content ran")
        self.assertEqual(self.errors, [], "refused requests: %s" % self.refusals)

    def screenshot(self, name):
        """Saves the page as CONSOLE_SCREENSHOTS/name.png when that folder is given."""
        folder = os.environ.get("CONSOLE_SCREENSHOTS")
        if folder:
            self.page.screenshot(path=os.path.join(folder, name + ".png"))

    def button(self, name):
        return self.page.get_by_role("button", name=name, exact=True)

    def log_in(self, name=ADMIN, password=PASSWORD):
        self.page.goto(self.server.url + "/_utils/#/login")
        self.page.fill("input[name=name]", name)
        self.page.fill("input[name=password]", password)
        self.page.click("button[type=submit]")
        # Logging in checks the password with PBKDF2 (CouchDB's iterations), which takes
        # 0.4 s in a debug build alone and seconds beside CI's other lanes and builds: the
        # default 5 s was once too short there (stop 69). What is checked is that it works.
        expect(self.page.locator(".who strong")).to_have_text(name, timeout=30_000)

    def test_the_console_is_served_safely_and_redirected(self):
        status, headers, _ = self.server.call("GET", "/_utils", user=None)
        # urllib follows the redirect: the page itself answers.
        self.assertEqual(status, 200)
        for path in ["/_utils/", "/_utils/console.js", "/_utils/console.css"]:
            status, headers, _ = self.server.call("GET", path, user=None)
            self.assertEqual(status, 200, path)
            policy = headers["Content-Security-Policy"]
            self.assertIn("script-src 'self'", policy)
            self.assertNotIn("unsafe-inline", policy)
            self.assertNotIn("unsafe-eval", policy)
            self.assertIn("frame-ancestors 'none'", policy)
            self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
            self.assertEqual(headers["X-Frame-Options"], "DENY")
        status, _, body = self.server.call("GET", "/_utils/missing.js", user=None)
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body)["error"], "not_found")
        total = 0
        for name in ["index.html", "console.css", "console.js", "api.js", "dom.js", "pages.js",
                     "more.js"]:
            status, _, body = self.server.call("GET", "/_utils/" + name, user=None)
            self.assertEqual(status, 200, name)
            total += len(body)
        self.assertLess(total, 250_000, "the console's files, uncompressed")
        print("\nconsole files: %d bytes" % total, file=sys.stderr)
        started = time.perf_counter()
        response = self.page.goto(self.server.url + "/_utils")
        expect(self.page.locator(".who")).to_contain_text("Not logged in")
        print("first screen drawn %.0f ms after the request (loopback)"
              % ((time.perf_counter() - started) * 1000), file=sys.stderr)
        self.assertTrue(self.page.url.endswith("/_utils/"), self.page.url)
        self.assertEqual(response.status, 200)
        expect(self.page.locator(".who")).to_contain_text("Not logged in")

    def test_a_wrong_password_is_said_and_nothing_is_stored_in_the_page(self):
        self.page.goto(self.server.url + "/_utils/#/login")
        self.page.fill("input[name=name]", ADMIN)
        self.page.fill("input[name=password]", "wrong")
        self.page.click("button[type=submit]")
        expect(self.page.locator(".problem")).to_contain_text("401")
        self.log_in()
        storage = self.page.evaluate(
            "() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])")
        self.assertNotIn(PASSWORD, storage)
        # The session cookie is HttpOnly: the page cannot read it.
        self.assertNotIn("AuthSession", storage)
        self.button("Log out").click()
        expect(self.page.locator(".who")).to_contain_text("Not logged in")
        status, _, _ = self.server.call("GET", "/_session", user=None)
        self.assertEqual(status, 200)

    def test_databases_and_documents_round_trip(self):
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/")
        self.page.fill("input[name=database]", "console-docs")
        self.button("Create database").click()
        expect(self.page.locator("h1")).to_have_text("console-docs")
        status, _, _ = self.server.call("GET", "/console-docs")
        self.assertEqual(status, 200)

        # A new document whose content is markup and script: it must show as text.
        hostile = '<img src=x onerror=__ran.push(1)></script><script>__ran.push(2)</script>'
        big = "18446744073709551616"
        self.page.click("text=New document")
        self.page.fill("textarea[name=document]",
                       '{"_id": "x<b>1</b>", "html": %s, %s: 1, "big": %s}'
                       % (json.dumps(hostile), json.dumps(hostile), big))
        self.button("Create").click()
        expect(self.page.locator("h1")).to_have_text("x<b>1</b>")
        editor = self.page.locator("textarea[name=document]")
        expect(editor).to_have_value(re.compile(re.escape(hostile)))
        self.assertEqual(self.page.locator("main img").count(), 0)
        self.assertEqual(self.page.locator("main b").count(), 0)
        self.assertIn(hostile, self.page.input_value("textarea[name=document]"))
        # Integers past 2^53 are shown and saved as written.
        self.assertIn('"big": ' + big, self.page.input_value("textarea[name=document]"))

        self.screenshot("document")

        # An attachment, uploaded from a file and downloaded back as it was.
        upload = os.path.join(self.server.directory.name, "note <i>.txt")
        with open(upload, "wb") as file:
            file.write(b"plain words, \xe2\x9c\x93\n")
        self.page.set_input_files("input[name=attachment]", upload)
        self.button("Upload").click()
        expect(self.page.locator(".attachments li")).to_contain_text("note <i>.txt")
        self.assertEqual(self.page.locator(".attachments i").count(), 0)
        with self.page.expect_download() as download:
            self.page.click(".attachments a.download")
        with open(download.value.path(), "rb") as file:
            self.assertEqual(file.read(), b"plain words, \xe2\x9c\x93\n")

        # Edit and save with the revision.
        text = self.page.input_value("textarea[name=document]")
        self.page.fill("textarea[name=document]", text.replace('"big"', '"edited": true, "big"'))
        self.button("Save").click()
        expect(self.page.locator(".done")).to_contain_text("Saved as revision 3-")
        status, _, body = self.server.call("GET", "/console-docs/x%3Cb%3E1%3C%2Fb%3E")
        self.assertEqual(status, 200)
        self.assertIn(b'"big":' + big.encode(), body.replace(b" ", b""))
        self.assertTrue(json.loads(body)["edited"])

        # Someone else writes meanwhile: the save is a conflict, shown, and the text kept.
        stored = json.loads(body)
        stored["other"] = "writer"
        status, _, _ = self.server.call("PUT", "/console-docs/x%3Cb%3E1%3C%2Fb%3E", stored)
        self.assertEqual(status, 201)
        mine = self.page.input_value("textarea[name=document]").replace('"edited": true', '"edited": "mine"')
        self.page.fill("textarea[name=document]", mine)
        self.button("Save").click()
        expect(self.page.locator(".problem")).to_contain_text("Conflict")
        self.assertEqual(self.page.input_value("textarea[name=document]"), mine)
        _, _, body = self.server.call("GET", "/console-docs/x%3Cb%3E1%3C%2Fb%3E")
        self.assertEqual(json.loads(body)["other"], "writer")
        self.button("Discard my text and load the latest").click()
        expect(self.page.locator("textarea[name=document]")).to_have_value(
            re.compile('"other": "writer"'))

        # A query's table shows the hostile field name as a column, as text.
        self.page.goto(self.server.url + "/_utils/#/db/console-docs/find")
        self.button("Run").click()
        expect(self.page.locator("table.results th").filter(has_text="<img")).to_have_count(1)
        self.assertEqual(self.page.locator("main img").count(), 0)

        # The list pages by id and finds by prefix.
        for number in range(25):
            self.server.call("PUT", "/console-docs/doc%02d" % number, {"n": number})
        self.page.goto(self.server.url + "/_utils/#/db/console-docs")
        expect(self.page.locator("tr[data-id]")).to_have_count(20)
        self.screenshot("documents")
        self.page.click("text=Next page")
        expect(self.page.locator("tr[data-id]")).to_have_count(6)
        expect(self.page.locator("tr[data-id]").last).to_have_attribute("data-id", "x<b>1</b>")
        self.page.fill("input[name=prefix]", "doc1")
        self.button("Search").click()
        expect(self.page.locator("tr[data-id]")).to_have_count(10)

        # Delete the document, then the database, each after a confirmation naming it.
        self.page.goto(self.server.url + "/_utils/#/db/console-docs/doc/doc00")
        expect(self.page.locator("textarea[name=document]")).to_have_value(re.compile('"n": 0'))
        self.page.click("button.danger:has-text('Delete')")
        expect(self.page.locator(".question")).to_contain_text("doc00")
        self.page.click(".confirming button.danger")
        expect(self.page.locator("h1")).to_have_text("console-docs")
        status, _, _ = self.server.call("GET", "/console-docs/doc00")
        self.assertEqual(status, 404)
        self.page.goto(self.server.url + "/_utils/#/")
        row = self.page.locator("tr[data-database='console-docs']")
        row.locator("button.danger").click()
        expect(row.locator(".question")).to_contain_text("console-docs")
        row.locator(".confirming button.danger").click()
        expect(self.page.locator("tr[data-database='console-docs']")).to_have_count(0)
        status, _, _ = self.server.call("GET", "/console-docs")
        self.assertEqual(status, 404)

    def test_a_mango_query_its_plan_an_index_and_live_results(self):
        self.server.call("PUT", "/console-find")
        for number in range(12):
            self.server.call("PUT", "/console-find/p%02d" % number,
                             {"age": number * 5, "name": "person %d" % number})
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/db/console-find/find")
        self.page.fill("textarea[name=query]", '{"selector": {"age": {"$gte": 40}}, "fields": ["_id", "age"]}')
        self.button("Run").click()
        expect(self.page.locator("table.results tbody tr")).to_have_count(4)
        self.button("Explain").click()
        expect(self.page.locator(".plan .chosen")).to_contain_text("all_docs")
        picture = self.page.locator(".plan svg.plan-picture")
        expect(picture.locator("text.title")).to_have_text(
            ["Selector", "All documents", "Read documents", "Page"])
        self.button("Create an index for this query").click()
        expect(self.page.locator(".done")).to_contain_text("created on age")
        self.button("Explain").click()
        expect(self.page.locator(".plan .chosen")).to_contain_text("on age")
        # Drawn: the index, its key range from 40, and the query covered by it.
        expect(picture.locator("text.title").nth(1)).to_contain_text("Index ")
        expect(picture).to_contain_text("on age")
        expect(picture).to_contain_text("[40]")
        expect(picture.locator("rect.picked")).to_have_count(1)
        self.button("Run").click()
        self.screenshot("query")
        # Live: a write elsewhere shows up without touching the page.
        self.page.check("input[name=live]")
        expect(self.page.locator(".live-state")).to_contain_text("Live")
        expect(self.page.locator("table.results tbody tr")).to_have_count(4)
        self.server.call("PUT", "/console-find/late", {"age": 99})
        expect(self.page.locator("table.results tbody tr")).to_have_count(5)
        self.page.uncheck("input[name=live]")
        expect(self.page.locator(".live-state")).to_have_text("")

    def test_conflicting_revisions_are_shown_and_one_is_picked(self):
        self.server.call("PUT", "/console-conflicts")
        status, _, body = self.server.call("POST", "/console-conflicts/_bulk_docs", {
            "new_edits": False,
            "docs": [{"_id": "c", "_rev": "1-aaa", "side": "one"},
                     {"_id": "c", "_rev": "1-bbb", "side": "two"}]})
        self.assertEqual(status, 201, body)
        _, _, body = self.server.call("GET", "/console-conflicts/c?conflicts=true")
        winner = json.loads(body)
        self.assertEqual(len(winner["_conflicts"]), 1)
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/db/console-conflicts/doc/c")
        section = self.page.locator("section.conflicts")
        expect(section.locator("h2")).to_contain_text("(1)")
        section.get_by_role("button", name="Compare", exact=True).click()
        losing_side = "two" if winner["side"] == "one" else "one"
        columns = section.locator(".side-by-side .column")
        expect(columns).to_have_count(2)
        expect(columns.nth(0).locator(".differs").filter(has_text='"side"')).to_contain_text(
            '"side": "%s"' % winner["side"])
        expect(columns.nth(1).locator(".differs").filter(has_text='"side"')).to_contain_text(
            '"side": "%s"' % losing_side)
        self.screenshot("conflicts")
        section.get_by_role("button", name="Make this the document", exact=True).click()
        section.locator(".confirming button.danger").first.click()
        expect(self.page.locator(".done")).to_contain_text("is now the document")
        _, _, body = self.server.call("GET", "/console-conflicts/c?conflicts=true")
        now = json.loads(body)
        self.assertNotIn("_conflicts", now)
        self.assertEqual(now["side"], "two" if winner["side"] == "one" else "one")
        self.assertTrue(now["_rev"].startswith("2-"), now["_rev"])
        expect(self.page.locator("section.conflicts")).to_have_count(0)

    def test_conflicting_revisions_are_merged_field_by_field(self):
        self.server.call("PUT", "/console-merge")
        # The loser is the revision whose suffix sorts lower: 1-aaa (CouchDB's rule).
        status, _, body = self.server.call("POST", "/console-merge/_bulk_docs", {
            "new_edits": False,
            "docs": [{"_id": "m", "_rev": "1-aaa", "side": "loser", "only_loser": [1, {"x": "<b>"}], "same": 1},
                     {"_id": "m", "_rev": "1-bbb", "side": "winner", "only_winner": True, "same": 1}]})
        self.assertEqual(status, 201, body)
        # A number past 2^53 in the loser, written as text so it is not rounded here.
        status, _, body = self.server.call(
            "PUT", "/console-merge/m?new_edits=false",
            raw=b'{"_id":"m","_rev":"2-ccc","_revisions":{"start":2,"ids":["ccc","aaa"]},'
                b'"side":"loser","only_loser":[1,{"x":"<b>"}],"same":1,"big":18446744073709551616}')
        self.assertEqual(status, 201, body)
        _, _, body = self.server.call("GET", "/console-merge/m?conflicts=true")
        winner = json.loads(body)
        self.assertEqual(winner["_rev"], "2-ccc")  # the longer branch wins
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/db/console-merge/doc/m")
        section = self.page.locator("section.conflicts")
        section.get_by_role("button", name="Merge field by field", exact=True).click()
        form = section.locator("form.merge")
        rows = form.locator("table.merge-fields tbody tr")
        # "same" is equal on both sides, so it is not asked about.
        expect(rows).to_have_count(4)
        expect(form.locator("th", has_text="same")).to_have_count(0)
        # The winner (2-ccc) holds side "loser", big and only_loser; take side and
        # only_winner from 1-bbb, and drop only_loser by choosing the side without it.
        for field in ("side", "only_winner", "only_loser"):
            form.locator('input[data-field="%s"][value=loser]' % field).check()
        self.screenshot("merge")
        form.get_by_role("button", name="Save the merge").click()
        expect(self.page.locator(".done")).to_contain_text("Merged revision 1-bbb")
        _, _, body = self.server.call("GET", "/console-merge/m?conflicts=true")
        now = json.loads(body)
        self.assertNotIn("_conflicts", now)
        self.assertTrue(now["_rev"].startswith("3-"), now["_rev"])
        self.assertEqual(now["side"], "winner")
        self.assertEqual(now["only_winner"], True)
        self.assertNotIn("only_loser", now)
        self.assertEqual(now["same"], 1)
        # The kept integer past 2^53 as written, not rounded by the page.
        self.assertIn(b'"big":18446744073709551616', body)

    def test_views_changes_and_security(self):
        self.server.call("PUT", "/console-views")
        status, _, body = self.server.call("PUT", "/console-views/_design/app", {
            "views": {"by_n": {"map": "function (doc) { if (doc.n !== undefined) emit(doc.n, null); }",
                               "reduce": "_count"}}})
        self.assertEqual(status, 201, body)
        for number in range(8):
            self.server.call("PUT", "/console-views/v%d" % number, {"n": number})
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/db/console-views/views")
        self.page.select_option("select[name=view]", label="_design/app / by_n")
        self.page.uncheck("input[name=reduce]")
        self.page.fill("input[name=startkey]", "5")
        self.button("Run view").click()
        expect(self.page.locator("table.view-rows tbody tr")).to_have_count(3)
        self.page.fill("input[name=startkey]", "five")
        self.button("Run view").click()
        expect(self.page.locator(".problem")).to_contain_text("must be JSON")
        self.page.fill("input[name=startkey]", "")
        self.page.check("input[name=reduce]")
        self.button("Run view").click()
        expect(self.page.locator("table.view-rows tbody tr td").nth(1)).to_have_text("8")

        # The view's JavaScript in a form of its own: an error is said and the text kept;
        # the fixed map is saved into the design document and runs.
        self.button("Edit this view").click()
        editor = self.page.locator("form.view-editor")
        expect(editor.locator("textarea[name=map]")).to_have_value(
            "function (doc) { if (doc.n !== undefined) emit(doc.n, null); }")
        expect(editor.locator("textarea[name=reduce-source]")).to_have_value("_count")
        broken = "function (doc) { emit(doc.n * 10, ; }"
        editor.locator("textarea[name=map]").fill(broken)
        editor.get_by_role("button", name="Save view").click()
        expect(editor.locator(".problem")).to_contain_text("compilation_error")
        expect(editor.locator("textarea[name=map]")).to_have_value(broken)
        editor.locator("textarea[name=map]").fill(
            "function (doc) { if (doc.n !== undefined) emit(doc.n * 10, null); }")
        editor.get_by_role("button", name="Save view").click()
        expect(self.page.locator("form.view-editor")).to_have_count(0)
        self.page.select_option("select[name=view]", label="_design/app / by_n")
        self.page.uncheck("input[name=reduce]")
        self.page.fill("input[name=startkey]", "50")
        self.button("Run view").click()
        expect(self.page.locator("table.view-rows tbody tr")).to_have_count(3)
        expect(self.page.locator("table.view-rows tbody tr td").first).to_have_text("50")
        _, _, body = self.server.call("GET", "/console-views/_design/app")
        self.assertEqual(json.loads(body)["views"]["by_n"]["reduce"], "_count")
        # A new view in a new design document.
        self.button("New view").click()
        editor = self.page.locator("form.view-editor")
        editor.locator("input[name=design]").fill("made")
        editor.locator("input[name=view-name]").fill("evens")
        editor.locator("textarea[name=map]").fill(
            "function (doc) { if (doc.n % 2 === 0) emit(doc.n, 1); }")
        editor.locator("textarea[name=reduce-source]").fill("_sum")
        editor.get_by_role("button", name="Save view").click()
        expect(self.page.locator("form.view-editor")).to_have_count(0)
        status, _, body = self.server.call("GET", "/console-views/_design/made/_view/evens")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["rows"], [{"key": None, "value": 4}])

        # A design document's JavaScript that does not compile: the save says why.
        self.page.goto(self.server.url + "/_utils/#/db/console-views/new")
        self.page.fill("textarea[name=document]",
                       '{"_id": "_design/broken", "views": {"v": {"map": "function (doc) { emit(doc.n, ; }"}}}')
        self.button("Create").click()
        expect(self.page.locator(".problem")).to_contain_text("compilation_error")
        expect(self.page.locator(".problem")).to_contain_text("SyntaxError")
        status, _, _ = self.server.call("GET", "/console-views/_design/broken")
        self.assertEqual(status, 404)

        # The changes page follows writes made elsewhere, newest first.
        self.page.goto(self.server.url + "/_utils/#/db/console-views/changes")
        expect(self.page.locator(".live-state")).to_contain_text("Live")
        self.server.call("PUT", "/console-views/arrived", {"n": 100})
        expect(self.page.locator("table.changes tbody tr").first).to_have_attribute("data-id", "arrived")
        self.page.goto(self.server.url + "/_utils/#/db/console-views/changes?from=start")
        # 8 documents, _design/app, _design/made and the one that arrived.
        expect(self.page.locator("table.changes tbody tr")).to_have_count(11)

        # Security, as the server then holds it.
        self.page.goto(self.server.url + "/_utils/#/db/console-views/security")
        expect(self.page.locator("input[name=admins-roles]")).to_have_value("_admin")
        self.page.fill("input[name=members-names]", "alice, bob")
        self.page.fill("input[name=admins-roles]", "ops")
        self.button("Save security").click()
        expect(self.page.locator(".done")).to_contain_text("Security saved")
        _, _, body = self.server.call("GET", "/console-views/_security")
        security = json.loads(body)
        self.assertEqual(security["members"]["names"], ["alice", "bob"])
        self.assertEqual(security["admins"]["roles"], ["ops"])
        self.page.reload()
        expect(self.page.locator("input[name=members-names]")).to_have_value("alice, bob")

    def test_users_and_replication(self):
        self.server.call("PUT", "/_users")  # as CouchDB, a new server has none
        self.log_in()
        self.page.goto(self.server.url + "/_utils/#/users")
        self.page.fill("input[name=user-name]", "carol")
        self.page.fill("input[name=user-password]", "carol-pass")
        self.page.fill("input[name=user-roles]", "readers")
        self.button("Create user").click()
        expect(self.page.locator("tr[data-user=carol]")).to_contain_text("readers")
        status, _, body = self.server.call("GET", "/_users/org.couchdb.user:carol")
        self.assertEqual(status, 200)
        self.assertNotIn("carol-pass", body.decode())
        status, _, _ = self.server.call("GET", "/_session", user=("carol", "carol-pass"))
        self.assertEqual(status, 200)
        self.page.locator("tr[data-user=carol] button.danger").click()
        self.page.locator("tr[data-user=carol] .confirming button.danger").click()
        expect(self.page.locator("tr[data-user=carol]")).to_have_count(0)
        status, _, _ = self.server.call("GET", "/_users/org.couchdb.user:carol")
        self.assertEqual(status, 404)

        self.server.call("PUT", "/console-source")
        self.server.call("POST", "/console-source/_bulk_docs",
                         {"docs": [{"_id": "r%03d" % number, "n": number} for number in range(300)]})
        # One-shot, to a second `settee serve`, by URL.
        other = Server()
        try:
            remote = other.url.replace("http://", "http://%s:%s@" % (ADMIN, PASSWORD)) + "/console-remote"
            self.page.goto(self.server.url + "/_utils/#/replication")
            self.page.fill("input[name=source]", "console-source")
            self.page.fill("input[name=target]", remote)
            self.page.check("input[name=create_target]")
            self.button("Start replication").click()
            expect(self.page.locator(".done")).to_contain_text("started")
            row = self.page.locator("tr[data-replication]")
            expect(row.locator(".state")).to_have_text("completed", timeout=60_000)
            self.assertNotIn(PASSWORD, self.page.locator("main").inner_text())
            _, _, body = other.call("GET", "/console-remote")
            self.assertEqual(json.loads(body)["doc_count"], 300)
        finally:
            other.stop()
        # A continuous one runs as a job, with its picture of documents over time.
        self.page.fill("input[name=source]", "console-source")
        self.page.fill("input[name=target]", "console-copy")
        self.page.uncheck("input[name=create_target]")
        self.page.check("input[name=continuous]")
        self.server.call("PUT", "/console-copy")
        self.button("Start replication").click()
        expect(self.page.locator(".job svg.progress").first).to_be_visible(timeout=60_000)
        expect(self.page.locator(".job .counts").filter(has_text="written 300").first).to_be_visible(
            timeout=60_000)
        self.screenshot("replication")
        self.server.call("PUT", "/console-source/late", {"n": 1})
        expect(self.page.locator(".job .counts").filter(has_text="written 301").first).to_be_visible(
            timeout=60_000)
        _, _, body = self.server.call("GET", "/console-copy/late")
        self.assertEqual(json.loads(body)["n"], 1)

    def test_a_member_sees_only_what_couchdb_lets_them(self):
        self.server.call("PUT", "/_users")  # as CouchDB, a new server has none
        status, _, body = self.server.call(
            "PUT", "/_users/org.couchdb.user:bob",
            {"name": "bob", "password": "bob-pass", "roles": [], "type": "user"})
        self.assertEqual(status, 201, body)
        self.server.call("PUT", "/console-private")
        self.server.call("PUT", "/console-private/secret", {"value": "hidden"})
        # A new database is for administrators only (CouchDB 3): the admin names bob a
        # member and bob reads; the admin then names alice alone and bob is refused.
        def members(names):
            self.page.context.clear_cookies()
            self.log_in()
            self.page.goto(self.server.url + "/_utils/#/db/console-private/security")
            # (Loaded: the admins' role is the default's and stays.)
            expect(self.page.locator("input[name=admins-roles]")).to_have_value("_admin")
            self.page.fill("input[name=members-roles]", "")
            self.page.fill("input[name=members-names]", names)
            self.button("Save security").click()
            expect(self.page.locator(".done")).to_contain_text("Security saved")
            self.page.context.clear_cookies()
            self.log_in("bob", "bob-pass")
        members("bob")
        self.page.goto(self.server.url + "/_utils/#/db/console-private/doc/secret")
        expect(self.page.locator("textarea[name=document]")).to_have_value(
            re.compile("hidden"))
        members("alice")
        self.page.goto(self.server.url + "/_utils/#/db/console-private")
        expect(self.page.locator(".problem")).to_contain_text("403")
        self.page.goto(self.server.url + "/_utils/#/db/console-private/doc/secret")
        expect(self.page.locator(".problem")).to_contain_text("403")
        self.assertNotIn("hidden", self.page.content())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: console_test.py path/to/settee [unittest arguments]")
    SETTEE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
