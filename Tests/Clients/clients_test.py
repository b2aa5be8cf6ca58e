"""Real CouchDB clients against `settee serve`: the Python packages `CouchDB` (1.2) and
`ibmcloudant`, as a user's scripts call them. `.ci/run` installs both into a virtual
environment and runs this file with the built binary:

    python clients_test.py path/to/settee

Each test class starts its own server on a free loopback port with a new file.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import couchdb
import requests
from ibm_cloud_sdk_core import ApiException
from ibm_cloud_sdk_core.authenticators import BasicAuthenticator, NoAuthAuthenticator
from ibmcloudant import CouchDbSessionAuthenticator
from ibmcloudant.cloudant_v1 import (
    BulkDocs, BulkGetQueryDocument, CloudantV1, IndexDefinition, IndexField, ReplicationDatabase,
    ReplicationDocument)

SETTEE = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "settee"


class Served:
    """`settee serve --port 0` on a new file; `url` once it listens."""

    def __init__(self, extra=(), env=None):
        self.directory = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.directory.name, "clients.db")
        self.process = subprocess.Popen(
            [SETTEE, "--db", self.path, "serve", "--port", "0", "--log-level", "none", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        line = self.process.stdout.readline()
        self.url = json.loads(line)["url"].rstrip("/")

    def stop(self):
        self.process.terminate()
        status = self.process.wait(timeout=30)
        self.process.stdout.close()
        self.directory.cleanup()
        return status


class CouchDBPackageTests(unittest.TestCase):
    """The `CouchDB` package (couchdb-python 1.2)."""

    @classmethod
    def setUpClass(cls):
        cls.served = Served()
        cls.server = couchdb.Server(cls.served.url + "/")

    @classmethod
    def tearDownClass(cls):
        assert cls.served.stop() == 0

    def test_server(self):
        self.assertEqual(self.server.version(), "3.3.3")
        self.assertEqual(len(self.server.uuids(5)), 5)
        self.assertEqual(self.server.tasks(), [])

    def test_databases(self):
        db = self.server.create("pydbs")
        self.assertIn("pydbs", self.server)
        self.assertIn("pydbs", list(self.server))
        with self.assertRaises(couchdb.PreconditionFailed):
            self.server.create("pydbs")
        self.assertEqual(db.info()["doc_count"], 0)
        del self.server["pydbs"]
        self.assertNotIn("pydbs", self.server)
        with self.assertRaises(couchdb.ResourceNotFound):
            self.server["pydbs"]

    def test_view_compaction(self):
        # couchdb-python's compact(ddoc) compacts a design document's views only: the
        # documents' replaced revisions stay; a design document that is missing is not_found.
        db = self.server.create("pyviewcompact")
        doc_id, rev = db.save({"_id": "v1", "n": 1})
        db.save({"_id": "v1", "_rev": rev, "n": 2})
        db.save({"_id": "_design/v", "views": {"n": {"map": "function(doc) { emit(doc.n); }"}}})
        self.assertTrue(db.compact("v"))
        self.assertEqual(db.get("v1", rev=rev)["n"], 1)
        with self.assertRaises(couchdb.ResourceNotFound):
            db.compact("nope")
        self.assertTrue(db.compact())
        self.assertIsNone(db.get("v1", rev=rev))

    def test_documents(self):
        db = self.server.create("pydocs")
        doc_id, rev = db.save({"_id": "mike", "name": "Mike", "age": 12})
        self.assertEqual(doc_id, "mike")
        doc = db["mike"]
        self.assertEqual(doc["age"], 12)
        doc["age"] = 13
        db.save(doc)
        self.assertEqual(db["mike"]["age"], 13)
        self.assertEqual(db["mike"].rev, doc["_rev"])
        stale = dict(db["mike"])
        stale["_rev"] = rev
        with self.assertRaises(couchdb.ResourceConflict):
            db.save(stale)
        # couchdb-python's test_doc_revs: replaced revisions read back until compaction.
        revisions = [r["_rev"] for r in db.revisions("mike")]
        self.assertEqual(revisions, [doc["_rev"], rev])
        self.assertEqual(db.get("mike", rev=rev)["age"], 12)
        self.assertEqual(list(db.revisions("crap")), [])
        self.assertTrue(db.compact())
        for _ in range(100):
            if not db.info()["compact_running"]:
                break
        self.assertIsNone(db.get("mike", rev=rev))
        self.assertEqual(len(list(db.revisions("mike"))), 1)
        generated, _ = db.save({"kind": "no id"})
        self.assertEqual(len(generated), 32)
        self.assertEqual(len(db), 2)
        db.delete(db["mike"])
        self.assertIsNone(db.get("mike"))
        self.assertEqual(db.info()["doc_del_count"], 1)
        db["_design/app"] = {"views": {}}
        self.assertIn("_design/app", db)

    def test_copy(self):
        # COPY with Destination, as the package's own tests use it.
        db = self.server.create("pycopy")
        db.save({"_id": "source", "n": 1})
        db.put_attachment(db["source"], b"hello", filename="h.txt", content_type="text/plain")
        rev = db.copy("source", "copied")
        self.assertTrue(rev.startswith("1-"), rev)  # a new document
        self.assertEqual(db["copied"]["n"], 1)
        self.assertEqual(db.get_attachment("copied", "h.txt").read(), b"hello")
        db.save({"_id": "existing", "n": 2})
        existing = db["existing"]
        db.copy("source", existing)  # a document with _rev: over its revision
        self.assertEqual(db["existing"]["n"], 1)
        with self.assertRaises(couchdb.ResourceConflict):
            db.copy("source", "existing")

    def test_bulk_views_and_changes(self):
        db = self.server.create("pybulk")
        results = db.update([{"_id": "a", "n": 1}, {"_id": "b", "n": 2}, {"n": 3}])
        self.assertTrue(all(ok for ok, _, _ in results))
        conflict = db.update([{"_id": "a", "n": 9}])
        self.assertFalse(conflict[0][0])
        self.assertIsInstance(conflict[0][2], couchdb.ResourceConflict)
        rows = {row.id: row for row in db.view("_all_docs", include_docs=True)}
        self.assertEqual(len(rows), 3)
        self.assertEqual(rows["a"].doc["n"], 1)
        keyed = list(db.view("_all_docs", keys=["b", "zz"]))
        self.assertEqual(keyed[0].id, "b")
        ranged = [row.id for row in db.view("_all_docs", startkey="a", endkey="b")]
        self.assertEqual((ranged[0], ranged[-1]), ("a", "b"))
        self.assertEqual([row.id for row in db.view("_all_docs", startkey="b", descending=True)][0], "b")
        changes = db.changes()
        self.assertEqual(len(changes["results"]), 3)
        since = db.changes(limit=1)["last_seq"]
        self.assertEqual(len(db.changes(since=since)["results"]), 2)
        feed = list(db.changes(feed="continuous", timeout=100))
        self.assertEqual(len([line for line in feed if "id" in line]), 3)
        self.assertIn("last_seq", feed[-1])
        self.assertTrue(db.commit())
        self.assertTrue(db.compact())
        purged = db.purge([db["b"]])
        self.assertIn("b", purged["purged"])
        self.assertNotIn("b", db)

    def test_design_document_javascript(self):
        # A CouchApp's design document as the CouchDB package writes it: its JavaScript
        # view runs, and its validate_doc_update refuses writes with CouchDB's 403 and 401.
        db = self.server.create("pyjs")
        db.save({
            "_id": "_design/app",
            "views": {"by_kind": {"map": "function (doc) { if (doc.kind) emit(doc.kind, 1); }",
                                  "reduce": "_count"}},
            "validate_doc_update": "function (doc, old, user) {"
                                   " if (!doc._deleted && !doc.kind) throw({forbidden: 'kind is required'});"
                                   " if (doc.kind === 'secret') throw({unauthorized: 'log in first'}); }",
        })
        db.update([{"_id": "a", "kind": "fruit"}, {"_id": "b", "kind": "fruit"}, {"_id": "c", "kind": "nut"}])
        grouped = {row.key: row.value for row in db.view("app/by_kind", group=True)}
        self.assertEqual(grouped, {"fruit": 2, "nut": 1})
        self.assertEqual([row.id for row in db.view("app/by_kind", key="nut", reduce=False)], ["c"])
        with self.assertRaises(couchdb.http.Forbidden) as refused:
            db.save({"_id": "d"})
        self.assertEqual(refused.exception.args[0], ("forbidden", "kind is required"))
        with self.assertRaises(couchdb.http.Unauthorized):
            db.save({"_id": "e", "kind": "secret"})
        results = db.update([{"_id": "f", "kind": "nut"}, {"_id": "g"}])
        self.assertTrue(results[0][0])
        self.assertFalse(results[1][0])
        self.assertNotIn("d", db)
        self.assertNotIn("g", db)

    def test_mango(self):
        db = self.server.create("pymango")
        db.update([{"_id": "p%d" % n, "age": n, "type": "user" if n % 2 else "admin"} for n in range(20)])
        index = db.index()
        index["people", "by-age"] = [{"age": "asc"}]
        names = [entry["name"] for entry in index]
        self.assertEqual(names, ["_all_docs", "by-age"])
        found = list(db.find({"selector": {"age": {"$gte": 17}}, "sort": [{"age": "asc"}]}))
        self.assertEqual([doc["_id"] for doc in found], ["p17", "p18", "p19"])
        plan = db.explain({"selector": {"age": {"$gt": 1}}})
        self.assertEqual(plan["index"]["name"], "by-age")
        del index["_design/people", "by-age"]
        self.assertEqual([entry["name"] for entry in index], ["_all_docs"])

    def test_the_packages_own_find_and_explain(self):
        # couchdb-python's own test_find and test_explain (they pass on CouchDB 3.5.0), run
        # against this server (its suite connects to COUCHDB_URL, read at import).
        from couchdb.tests import client as package_tests
        url = self.served.url + "/"

        class HereTestCase(package_tests.DatabaseTestCase):
            def setUp(inner):
                inner.server = couchdb.Server(url, full_commit=False)

        suite = unittest.TestSuite(HereTestCase(name) for name in ("test_find", "test_explain"))
        with open(os.devnull, "w") as quiet:
            result = unittest.TextTestRunner(stream=quiet).run(suite)
        self.assertEqual(result.testsRun, 2)
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)

    def test_attachments_and_security(self):
        db = self.server.create("pyatt")
        doc = {"_id": "note"}
        db.save(doc)
        content = bytes(range(256)) * 40
        db.put_attachment(doc, content, filename="blob.bin", content_type="application/x-blob")
        self.assertEqual(db.get_attachment("note", "blob.bin").read(), content)
        stored = db["note"]
        self.assertEqual(stored["_attachments"]["blob.bin"]["length"], len(content))
        db.delete_attachment(stored, "blob.bin")
        self.assertIsNone(db.get_attachment("note", "blob.bin"))
        db.security = {"members": {"names": ["mike"], "roles": []}}
        self.assertEqual(db.security["members"]["names"], ["mike"])
        # An integer past 64 bits comes back exactly, as from CouchDB (issue 55).
        db.save({"_id": "big", "n": 2 ** 64})
        self.assertEqual(db["big"]["n"], 2 ** 64)
        rows = list(db.view("_all_docs", include_docs=True, key="big"))
        self.assertEqual(rows[0].doc["n"], 2 ** 64)


class CloudantPackageTests(unittest.TestCase):
    """The `ibmcloudant` package (Cloudant's Python SDK), without authentication."""

    @classmethod
    def setUpClass(cls):
        cls.served = Served()
        cls.service = CloudantV1(authenticator=NoAuthAuthenticator())
        cls.service.set_service_url(cls.served.url)

    @classmethod
    def tearDownClass(cls):
        assert cls.served.stop() == 0

    def test_server(self):
        info = self.service.get_server_information().get_result()
        self.assertEqual(info["vendor"]["name"], "Settee")
        self.assertEqual(len(self.service.get_uuids(count=3).get_result()["uuids"]), 3)
        self.assertEqual(self.service.get_up_information().get_result()["status"], "ok")
        self.assertEqual(self.service.get_active_tasks().get_result(), [])
        session = self.service.get_session_information().get_result()
        self.assertTrue(session["ok"])

    def test_databases_and_documents(self):
        service = self.service
        self.assertTrue(service.put_database(db="sdk").get_result()["ok"])
        with self.assertRaises(ApiException) as refused:
            service.put_database(db="sdk")
        self.assertEqual(refused.exception.code, 412)
        self.assertIn("sdk", service.get_all_dbs().get_result())
        created = service.post_document(db="sdk", document={"_id": "a", "n": 1}).get_result()
        self.assertTrue(created["ok"])
        doc = service.get_document(db="sdk", doc_id="a").get_result()
        self.assertEqual(doc["n"], 1)
        doc["n"] = 2
        updated = service.put_document(db="sdk", doc_id="a", document=doc).get_result()
        self.assertTrue(updated["rev"].startswith("2-"))
        self.assertEqual(service.head_document(db="sdk", doc_id="a").get_status_code(), 200)
        with self.assertRaises(ApiException) as conflict:
            service.put_document(db="sdk", doc_id="a", document={"n": 3})
        self.assertEqual(conflict.exception.code, 409)
        with self.assertRaises(ApiException) as missing:
            service.get_document(db="sdk", doc_id="nope")
        self.assertEqual(missing.exception.code, 404)
        info = service.get_database_information(db="sdk").get_result()
        self.assertEqual(info["doc_count"], 1)
        deleted = service.delete_document(db="sdk", doc_id="a", rev=updated["rev"]).get_result()
        self.assertTrue(deleted["ok"])
        self.assertTrue(service.delete_database(db="sdk").get_result()["ok"])
        with self.assertRaises(ApiException) as gone:
            service.get_database_information(db="sdk")
        self.assertEqual(gone.exception.code, 404)
        self.assertTrue(gone.exception.message.endswith("Database does not exist."))

    def test_bulk_and_replication_calls(self):
        service = self.service
        service.put_database(db="repl")
        docs = [{"_id": "d%d" % n, "n": n} for n in range(10)]
        written = service.post_bulk_docs(db="repl", bulk_docs=BulkDocs(docs=docs)).get_result()
        self.assertEqual(len(written), 10)
        peer = BulkDocs(new_edits=False, docs=[
            {"_id": "d0", "_rev": "2-peer", "_revisions": {"start": 2, "ids": ["peer", written[0]["rev"].split("-")[1]]}, "n": 100}])
        self.assertEqual(service.post_bulk_docs(db="repl", bulk_docs=peer).get_result(), [])
        all_docs = service.post_all_docs(db="repl", include_docs=True, limit=3).get_result()
        self.assertEqual([row["id"] for row in all_docs["rows"]], ["d0", "d1", "d2"])
        self.assertEqual(all_docs["rows"][0]["doc"]["n"], 100)
        changes = service.post_changes(db="repl", style="all_docs").get_result()
        self.assertEqual(len(changes["results"]), 10)
        filtered = service.post_changes(db="repl", filter="_doc_ids", doc_ids=["d3", "d4"]).get_result()
        self.assertEqual([row["id"] for row in filtered["results"]], ["d3", "d4"])
        selected = service.post_changes(db="repl", filter="_selector", selector={"n": {"$gt": 8}}).get_result()
        self.assertEqual([row["id"] for row in selected["results"]], ["d9", "d0"])  # d0 changed last
        diff = service.post_revs_diff(db="repl", document_revisions={"d1": [written[1]["rev"], "9-zz"]}).get_result()
        self.assertEqual(diff["d1"]["missing"], ["9-zz"])
        fetched = service.post_bulk_get(
            db="repl", docs=[BulkGetQueryDocument(id="d0", rev="2-peer"), BulkGetQueryDocument(id="nope")], revs=True).get_result()
        self.assertEqual(fetched["results"][0]["docs"][0]["ok"]["_revisions"]["start"], 2)
        self.assertIn("error", fetched["results"][1]["docs"][0])
        local = service.put_local_document(db="repl", doc_id="checkpoint", document={"seq": "5"}).get_result()
        self.assertTrue(local["ok"])
        self.assertEqual(service.get_local_document(db="repl", doc_id="checkpoint").get_result()["seq"], "5")

    def test_replication_documents(self):
        """The SDK's `_replicator` calls: a document's replication runs, `_scheduler/docs`
        shows it completed, and deleting the document is accepted."""
        service = self.service
        service.put_database(db="_replicator")
        service.put_database(db="origin")
        service.post_bulk_docs(db="origin", bulk_docs=BulkDocs(docs=[{"_id": "o%d" % n} for n in range(5)]))
        document = ReplicationDocument(
            source=ReplicationDatabase(url=self.served.url + "/origin"),
            target=ReplicationDatabase(url=self.served.url + "/mirror"), create_target=True)
        written = service.put_replication_document(doc_id="mirror", replication_document=document).get_result()
        self.assertTrue(written["ok"])
        state = None
        for _ in range(600):  # bounded: 60 s
            state = service.get_scheduler_document(doc_id="mirror").get_result()
            if state["state"] == "completed":
                break
            time.sleep(0.1)
        self.assertEqual(state["state"], "completed", state)
        self.assertEqual(state["info"]["docs_written"], 5)
        self.assertEqual(service.get_scheduler_docs().get_result()["docs"][0]["doc_id"], "mirror")
        self.assertEqual(service.get_database_information(db="mirror").get_result()["doc_count"], 5)
        read = service.get_replication_document(doc_id="mirror").get_result()
        self.assertTrue(read["create_target"])
        deleted = service.delete_replication_document(doc_id="mirror", rev=read["_rev"]).get_result()
        self.assertTrue(deleted["ok"])

    def test_query_and_attachments(self):
        service = self.service
        service.put_database(db="query")
        service.post_bulk_docs(db="query", bulk_docs=BulkDocs(docs=[{"_id": "p%d" % n, "age": n} for n in range(30)]))
        made = service.post_index(
            db="query", index=IndexDefinition(fields=[IndexField(age="asc")]), name="by-age", ddoc="ages").get_result()
        self.assertEqual(made["result"], "created")
        indexes = service.get_indexes_information(db="query").get_result()
        self.assertEqual(indexes["total_rows"], 2)
        found = service.post_find(db="query", selector={"age": {"$lt": 2}}, sort=[{"age": "asc"}]).get_result()
        self.assertEqual([doc["_id"] for doc in found["docs"]], ["p0", "p1"])
        explained = service.post_explain(db="query", selector={"age": {"$lt": 2}}).get_result()
        self.assertEqual(explained["index"]["name"], "by-age")
        self.assertTrue(service.delete_index(db="query", ddoc="ages", type="json", index="by-age").get_result()["ok"])
        rev = service.get_document(db="query", doc_id="p0").get_result()["_rev"]
        put = service.put_attachment(
            db="query", doc_id="p0", attachment_name="a.txt", attachment=b"hello", content_type="text/plain", rev=rev)
        self.assertTrue(put.get_result()["ok"])
        got = service.get_attachment(db="query", doc_id="p0", attachment_name="a.txt").get_result()
        self.assertEqual(got.content, b"hello")
        inline = service.get_document(db="query", doc_id="p0", attachments=True).get_result()
        self.assertEqual(base64.b64decode(inline["_attachments"]["a.txt"]["data"]), b"hello")
        # Lists carry attachments as one document does (issue 55): stubs, or data when asked.
        listed = service.post_all_docs(db="query", include_docs=True, attachments=True, key="p0").get_result()
        self.assertEqual(base64.b64decode(listed["rows"][0]["doc"]["_attachments"]["a.txt"]["data"]), b"hello")
        changes = service.post_changes(db="query", include_docs=True, doc_ids=["p0"], filter="_doc_ids").get_result()
        self.assertTrue(changes["results"][0]["doc"]["_attachments"]["a.txt"]["stub"])
        found = service.post_find(db="query", selector={"age": 0}).get_result()
        self.assertEqual(found["docs"][0]["_attachments"]["a.txt"]["length"], 5)
        # A text attachment is stored as CouchDB stores it: its digest is CouchDB's.
        self.assertEqual(found["docs"][0]["_attachments"]["a.txt"]["digest"], "md5-iMaiC8wqiFlD2NjLTemvCQ==")

    def test_integers_past_64_bits(self):
        service = self.service
        service.put_database(db="numbers")
        big = 2 ** 64
        service.put_document(db="numbers", doc_id="n", document={"big": big, "neg": -big - 1})
        got = service.get_document(db="numbers", doc_id="n").get_result()
        self.assertEqual((got["big"], got["neg"]), (big, -big - 1))
        listed = service.post_all_docs(db="numbers", include_docs=True).get_result()
        self.assertEqual(listed["rows"][0]["doc"]["big"], big)


class AuthenticatedClientsTests(unittest.TestCase):
    """An administrator configured: both packages log in (Basic, and Cloudant's cookie
    session authenticator), and what is the administrators' is refused without
    credentials."""

    @classmethod
    def setUpClass(cls):
        cls.served = Served(extra=["--admin", "boss"], env={"SETTEE_ADMIN_PASSWORD": "pa55 word"})

    @classmethod
    def tearDownClass(cls):
        assert cls.served.stop() == 0

    def test_refused_without_credentials(self):
        answer = requests.get(self.served.url + "/_all_dbs")
        self.assertEqual(answer.status_code, 401)
        self.assertEqual(answer.json(), {"error": "unauthorized", "reason": "You are not a server admin."})
        self.assertEqual(requests.get(self.served.url + "/_up").status_code, 200)
        anonymous = couchdb.Server(self.served.url + "/")
        with self.assertRaises(couchdb.Unauthorized):
            anonymous.create("nope")

    def test_couchdb_package_with_credentials(self):
        host = self.served.url.replace("http://", "")
        server = couchdb.Server("http://boss:pa55%%20word@%s/" % host)
        db = server.create("authed")
        db.save({"_id": "a"})
        self.assertIn("a", db)
        wrong = couchdb.Server("http://boss:wrong@%s/" % host)
        with self.assertRaises(couchdb.Unauthorized):
            list(wrong)

    def test_cloudant_basic_and_session(self):
        basic = CloudantV1(authenticator=BasicAuthenticator("boss", "pa55 word"))
        basic.set_service_url(self.served.url)
        self.assertTrue(basic.put_database(db="viabasic").get_result()["ok"])
        session = CloudantV1(authenticator=CouchDbSessionAuthenticator("boss", "pa55 word"))
        session.set_service_url(self.served.url)
        self.assertIn("viabasic", session.get_all_dbs().get_result())
        info = session.get_session_information().get_result()
        self.assertEqual(info["userCtx"]["name"], "boss")
        self.assertEqual(info["info"]["authenticated"], "cookie")

    def test_users_from_both_packages(self):
        """A user made with the CouchDB package's add_user reads the database whose
        _security names their role, logs in with its login and with Cloudant's session
        authenticator, and is refused what is the administrator's."""
        host = self.served.url.replace("http://", "")
        admin = couchdb.Server("http://boss:pa55%%20word@%s/" % host)
        if "_users" not in admin:
            admin.create("_users")
        admin.add_user("ann", "ann word", ["readers"])
        db = admin.create("shared")
        db.save({"_id": "memo", "text": "hi"})
        db.security = {"members": {"names": [], "roles": ["readers"]}, "admins": {"names": [], "roles": []}}
        stored = admin["_users"]["org.couchdb.user:ann"]
        self.assertNotIn("password", stored)
        self.assertEqual(stored["password_scheme"], "pbkdf2")

        ann = couchdb.Server("http://ann:ann%%20word@%s/" % host)
        self.assertEqual(ann["shared"]["memo"]["text"], "hi")
        with self.assertRaises(couchdb.Unauthorized):
            ann.create("mine")
        with self.assertRaises(couchdb.Unauthorized):
            list(ann)  # _all_dbs
        # _users is admin-only until its _security opens it, as in CouchDB 3.
        with self.assertRaises(couchdb.Forbidden):
            ann["_users"]
        # (The CouchDB package's login() takes a response's first header for the cookie,
        # which CouchDB 3 does not send first either: its headers come sorted by name.)
        login = requests.post(self.served.url + "/_session", json={"name": "ann", "password": "ann word"})
        self.assertEqual(login.json(), {"ok": True, "name": "ann", "roles": ["readers"]})
        who = requests.get(self.served.url + "/_session", cookies=login.cookies)
        self.assertEqual(who.json()["userCtx"], {"name": "ann", "roles": ["readers"]})

        session = CloudantV1(authenticator=CouchDbSessionAuthenticator("ann", "ann word"))
        session.set_service_url(self.served.url)
        self.assertEqual(session.get_document(db="shared", doc_id="memo").get_result()["text"], "hi")
        self.assertEqual(session.get_session_information().get_result()["userCtx"]["roles"], ["readers"])

        admin.remove_user("ann")
        refused = requests.get(self.served.url + "/shared/memo", auth=("ann", "ann word"))
        self.assertEqual(refused.status_code, 401)


    def test_users_members_and_what_clients_probe(self):
        """What clients and tools read (_membership, _node/_local/_config,
        _users/_design/_auth) answers an administrator, and a member of an opened _users
        finds only their own document through Cloudant's post_find."""
        host = self.served.url.replace("http://", "")
        admin = couchdb.Server("http://boss:pa55%%20word@%s/" % host)
        if "_users" not in admin:
            admin.create("_users")
        users = admin["_users"]
        self.assertEqual(users["_design/_auth"]["language"], "javascript")
        basic = CloudantV1(authenticator=BasicAuthenticator("boss", "pa55 word"))
        basic.set_service_url(self.served.url)
        membership = basic.get_membership_information().get_result()
        self.assertEqual(membership["all_nodes"], membership["cluster_nodes"])
        self.assertEqual(len(membership["all_nodes"]), 1)
        config = requests.get(self.served.url + "/_node/_local/_config", auth=("boss", "pa55 word"))
        self.assertEqual(config.json()["chttpd_auth"]["authentication_db"], "_users")
        self.assertEqual(requests.get(self.served.url + "/_node/_local/_config").status_code, 401)

        closed = users.security
        users.security = {"members": {"names": [], "roles": []}, "admins": {"names": [], "roles": ["_admin"]}}
        try:
            admin.add_user("bea", "bea word", [])
            admin.add_user("cal", "cal word", [])
            bea = CloudantV1(authenticator=BasicAuthenticator("bea", "bea word"))
            bea.set_service_url(self.served.url)
            found = bea.post_find(db="_users", selector={"type": "user"}).get_result()
            self.assertEqual([doc["_id"] for doc in found["docs"]], ["org.couchdb.user:bea"])
            with self.assertRaises(ApiException) as refused:
                bea.get_design_document(db="_users", ddoc="_auth")
            self.assertEqual(refused.exception.code, 403)
        finally:
            users.security = closed


class CurlLikeTests(unittest.TestCase):
    """Exact headers and bodies, as `curl` scripts see them."""

    @classmethod
    def setUpClass(cls):
        cls.served = Served()

    @classmethod
    def tearDownClass(cls):
        assert cls.served.stop() == 0

    def test_headers(self):
        url = self.served.url
        made = requests.put(url + "/raw")
        self.assertEqual(made.status_code, 201)
        self.assertEqual(made.headers["Location"], "/raw")
        written = requests.put(url + "/raw/doc", data=b'{"a":1}')
        self.assertEqual(written.headers["ETag"], '"%s"' % written.json()["rev"])
        self.assertEqual(written.headers["Content-Type"], "application/json")
        self.assertTrue(written.text.endswith("\n"))
        wrong = requests.post(url + "/raw", data=b"{}", headers={"Content-Type": "text/plain"})
        self.assertEqual((wrong.status_code, wrong.json()["error"]), (415, "bad_content_type"))
        probe = requests.get(url + "/raw/_bulk_get")
        self.assertEqual(probe.status_code, 405)
        commit = requests.post(url + "/raw/_ensure_full_commit", json={})
        self.assertEqual((commit.status_code, commit.json()), (201, {"ok": True, "instance_start_time": "0"}))


class FaultyProxy:
    """A proxy in front of a server that spoils some requests, by their number: a 500, a
    body that is not JSON, a connection closed halfway through the answer, an answer
    slower than the replicator waits; or by their path (`path_faults`, each once): a
    document in the answer that is not JSON. Paths holding one of `refused` are answered
    404, as by a CouchDB without them. Every other request is forwarded as it is, and each
    is recorded in `seen` as (method, path, Content-Type, Accept)."""

    def __init__(self, upstream, faults, path_faults=None, refused=()):
        import http.server
        import socketserver
        import threading
        proxy = self
        self.upstream = upstream
        self.faults = dict(faults)
        self.path_faults = dict(path_faults or {})
        self.refused = tuple(refused)
        self.seen = []
        self.count = 0
        self.injected = []
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                with proxy.lock:
                    proxy.count += 1
                    fault = proxy.faults.pop(proxy.count, None)
                    for part in list(proxy.path_faults):
                        if not fault and part in self.path:
                            fault = proxy.path_faults.pop(part)
                    proxy.seen.append((self.command, self.path,
                                       self.headers.get("Content-Type", ""),
                                       self.headers.get("Accept", "")))
                if fault:
                    proxy.injected.append(fault)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if any(part in self.path for part in proxy.refused):
                    self.answer(404, b'{"error":"not_found","reason":"missing"}')
                    return
                if fault == "500":
                    self.answer(500, b'{"error":"internal_server_error","reason":"injected"}')
                    return
                if fault == "slow":
                    import time
                    time.sleep(3)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "content-length", "connection")}
                answer = requests.request(self.command, proxy.upstream + self.path,
                                          data=body, headers=headers, timeout=60)
                content = answer.content
                if fault == "malformed":
                    content = b'{"results": [ not json'
                if fault == "baddoc":
                    # Framed as an answer, but one document's text is not JSON.
                    content = content.replace(b'"n":', b'"n":tru,"m":', 1)
                if fault == "cut":
                    self.send_response(answer.status_code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(content) + 100))
                    self.end_headers()
                    self.wfile.write(content[: len(content) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.answer(answer.status_code, content,
                            answer.headers.get("Content-Type", "application/json"))

            def answer(self, status, content, content_type="application/json"):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class ReplicationFaultTests(unittest.TestCase):
    """`settee replicate` between two servers through a proxy that spoils requests: the
    replication reports the failures, retries, and ends with both sides equal."""

    def test_faults_are_retried_and_nothing_is_lost(self):
        source, target = Served(), Served()
        try:
            requests.put(source.url + "/db")
            docs = [{"_id": "d%03d" % n, "n": n} for n in range(300)]
            requests.post(source.url + "/db/_bulk_docs", json={"docs": docs})
            rev = requests.get(source.url + "/db/d007").json()["_rev"]
            requests.put(source.url + "/db/d007/file.bin?rev=" + rev, data=bytes(range(256)) * 40,
                         headers={"Content-Type": "application/octet-stream"})
            large = os.urandom(300_000)
            rev = requests.get(source.url + "/db/d008").json()["_rev"]
            requests.put(source.url + "/db/d008/large.bin?rev=" + rev, data=large,
                         headers={"Content-Type": "application/octet-stream"})
            # Request 1 checks the source; the target's are spoiled from the fourth on.
            faults = {4: "500", 7: "malformed", 10: "cut", 13: "slow", 16: "500"}
            proxy = FaultyProxy(target.url, faults)
            host = proxy.url.replace("http://", "http://admin:s3cret@")
            run = subprocess.run(
                [SETTEE, "replicate", source.url + "/db", host + "/db", "--create-target",
                 "--request-timeout", "1", "--batch-size", "100"],
                capture_output=True, text=True, timeout=300)
            proxy.stop()
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(sorted(proxy.injected), sorted(faults.values()))
            self.assertNotIn("s3cret", run.stdout + run.stderr)
            summary = json.loads(run.stdout)
            self.assertTrue(summary["ok"])
            ours = requests.get(source.url + "/db/_all_docs").json()["rows"]
            theirs = requests.get(target.url + "/db/_all_docs").json()["rows"]
            self.assertEqual(ours, theirs)
            self.assertEqual(
                requests.get(target.url + "/db/d007/file.bin").content, bytes(range(256)) * 40)
            # The large attachment went on its own, as bytes (CouchDB's replicator's way).
            self.assertEqual(requests.get(target.url + "/db/d008/large.bin").content, large)
            self.assertTrue(any(
                method == "PUT" and path.startswith("/db/d008?") and "new_edits=false" in path
                and kind.startswith("multipart/related")
                for method, path, kind, _ in proxy.seen), proxy.seen)
            # The checkpoints on both sides name the peers without the password.
            for side in (source, target):
                logs = requests.get(side.url + "/db/_local_docs?include_docs=true").text
                self.assertIn("session_id", logs)
                self.assertNotIn("s3cret", logs)
        finally:
            source.stop()
            target.stop()

    def _source_with_everything(self, source):
        """Documents of every kind a replication carries: plain, deleted, conflicting,
        with a large attachment, with many small ones."""
        requests.put(source.url + "/db")
        docs = [{"_id": "d%03d" % n, "n": n} for n in range(40)]
        requests.post(source.url + "/db/_bulk_docs", json={"docs": docs})
        rev = requests.get(source.url + "/db/d001").json()["_rev"]
        requests.delete(source.url + "/db/d001?rev=" + rev)
        requests.post(source.url + "/db/_bulk_docs", json={"new_edits": False, "docs": [
            {"_id": "c", "_rev": "1-aaa", "v": 1}, {"_id": "c", "_rev": "1-bbb", "v": 2}]})
        files = {}
        rev = requests.get(source.url + "/db/d002").json()["_rev"]
        files[("d002", "large.bin")] = os.urandom(150_000)
        rev = requests.put(source.url + "/db/d002/large.bin?rev=" + rev,
                           data=files[("d002", "large.bin")]).json()["rev"]
        for number in range(10):
            name = "small-%d.txt" % number
            files[("d003", name)] = ("file %d " % number).encode() * 20
            rev = requests.get(source.url + "/db/d003").json()["_rev"]
            requests.put(source.url + "/db/d003/%s?rev=%s" % (name, rev), data=files[("d003", name)],
                         headers={"Content-Type": "text/plain"})
        return files

    def _assert_equal(self, source, target, files):
        for url in (source.url, target.url):
            self.assertEqual(requests.get(url + "/db").status_code, 200)
        ours = requests.get(source.url + "/db/_changes?style=all_docs").json()["results"]
        theirs = requests.get(target.url + "/db/_changes?style=all_docs").json()["results"]
        key = lambda row: row["id"]
        self.assertEqual(
            [(r["id"], sorted(c["rev"] for c in r["changes"]), r.get("deleted", False))
             for r in sorted(ours, key=key)],
            [(r["id"], sorted(c["rev"] for c in r["changes"]), r.get("deleted", False))
             for r in sorted(theirs, key=key)])
        for (doc, name), content in files.items():
            self.assertEqual(requests.get("%s/db/%s/%s" % (target.url, doc, name)).content, content)

    def test_a_source_without_bulk_get_is_read_by_open_revs_as_multipart(self):
        source, target = Served(), Served()
        try:
            files = self._source_with_everything(source)
            proxy = FaultyProxy(source.url, {}, refused=("_bulk_get",))
            run = subprocess.run(
                [SETTEE, "replicate", proxy.url + "/db", target.url + "/db", "--create-target"],
                capture_output=True, text=True, timeout=300)
            proxy.stop()
            self.assertEqual(run.returncode, 0, run.stderr)
            self._assert_equal(source, target, files)
            reads = [seen for seen in proxy.seen if "open_revs=" in seen[1]]
            self.assertTrue(reads)
            self.assertTrue(all(accept == "multipart/mixed" for _, _, _, accept in reads))
        finally:
            source.stop()
            target.stop()

    def test_a_document_that_is_not_json_is_the_sources_fault_and_retried(self):
        source, target = Served(), Served()
        try:
            files = self._source_with_everything(source)
            proxy = FaultyProxy(source.url, {}, path_faults={"_bulk_get": "baddoc"})
            run = subprocess.run(
                [SETTEE, "replicate", proxy.url + "/db", target.url + "/db", "--create-target"],
                capture_output=True, text=True, timeout=300)
            proxy.stop()
            self.assertEqual(proxy.injected, ["baddoc"])
            self.assertEqual(run.returncode, 0, run.stderr)
            # Retried from the checkpoint, not counted as a document the target refused.
            summary = json.loads(run.stdout)
            self.assertEqual(summary["history"][0]["doc_write_failures"], 0)
            self._assert_equal(source, target, files)
        finally:
            source.stop()
            target.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
