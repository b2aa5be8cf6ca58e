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
import subprocess
import sys
import tempfile
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

    def call(self, method, path, body=None, user=(ADMIN, PASSWORD), headers=None):
        """The API as a client other than the page sees it: (status, headers, JSON body)."""
        data = None if body is None else json.dumps(body).encode()
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

    def tearDown(self):
        self.context.close()
        self.assertEqual(self.errors, [], "refused requests: %s" % self.refusals)

    def button(self, name):
        return self.page.get_by_role("button", name=name, exact=True)

    def log_in(self, name=ADMIN, password=PASSWORD):
        self.page.goto(self.server.url + "/_utils/#/login")
        self.page.fill("input[name=name]", name)
        self.page.fill("input[name=password]", password)
        self.page.click("button[type=submit]")
        expect(self.page.locator(".who strong")).to_have_text(name)

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
        response = self.page.goto(self.server.url + "/_utils")
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
        hostile = '<img src=x onerror=alert(1)></script><script>alert(2)</script>'
        big = "18446744073709551616"
        self.page.click("text=New document")
        self.page.fill("textarea[name=document]",
                       '{"_id": "x<b>1</b>", "html": %s, "big": %s}' % (json.dumps(hostile), big))
        self.button("Create").click()
        expect(self.page.locator("h1")).to_have_text("x<b>1</b>")
        self.assertEqual(self.page.locator("main img").count(), 0)
        self.assertEqual(self.page.locator("main b").count(), 0)
        self.assertIn(hostile, self.page.input_value("textarea[name=document]"))
        # Integers past 2^53 are shown and saved as written.
        self.assertIn('"big": ' + big, self.page.input_value("textarea[name=document]"))

        # Edit and save with the revision.
        text = self.page.input_value("textarea[name=document]")
        self.page.fill("textarea[name=document]", text.replace('"big"', '"edited": true, "big"'))
        self.button("Save").click()
        expect(self.page.locator(".done")).to_contain_text("Saved as revision 2-")
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
            __import__("re").compile('"other": "writer"'))

        # The list pages by id and finds by prefix.
        for number in range(25):
            self.server.call("PUT", "/console-docs/doc%02d" % number, {"n": number})
        self.page.goto(self.server.url + "/_utils/#/db/console-docs")
        expect(self.page.locator("tr[data-id]")).to_have_count(20)
        self.page.click("text=Next page")
        expect(self.page.locator("tr[data-id]")).to_have_count(6)
        expect(self.page.locator("tr[data-id]").last).to_have_attribute("data-id", "x<b>1</b>")
        self.page.fill("input[name=prefix]", "doc1")
        self.button("Search").click()
        expect(self.page.locator("tr[data-id]")).to_have_count(10)

        # Delete the document, then the database, each after a confirmation naming it.
        self.page.goto(self.server.url + "/_utils/#/db/console-docs/doc/doc00")
        expect(self.page.locator("textarea[name=document]")).to_have_value(__import__("re").compile('"n": 0'))
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
        self.button("Create an index for this query").click()
        expect(self.page.locator(".done")).to_contain_text("created on age")
        self.button("Explain").click()
        expect(self.page.locator(".plan .chosen")).to_contain_text("on age")
        # Live: a write elsewhere shows up without touching the page.
        self.page.check("input[name=live]")
        expect(self.page.locator(".live-state")).to_contain_text("Live")
        expect(self.page.locator("table.results tbody tr")).to_have_count(4)
        self.server.call("PUT", "/console-find/late", {"age": 99})
        expect(self.page.locator("table.results tbody tr")).to_have_count(5)
        self.page.uncheck("input[name=live]")
        expect(self.page.locator(".live-state")).to_have_text("")

    def test_a_member_sees_only_what_couchdb_lets_them(self):
        self.server.call("PUT", "/_users")  # as CouchDB, a new server has none
        status, _, body = self.server.call(
            "PUT", "/_users/org.couchdb.user:bob",
            {"name": "bob", "password": "bob-pass", "roles": [], "type": "user"})
        self.assertEqual(status, 201, body)
        self.server.call("PUT", "/console-private")
        self.server.call("PUT", "/console-private/_security",
                         {"admins": {"names": [], "roles": []}, "members": {"names": ["alice"], "roles": []}})
        self.server.call("PUT", "/console-private/secret", {"value": "hidden"})
        self.log_in("bob", "bob-pass")
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
