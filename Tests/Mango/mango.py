"""The client and the fixtures the Mango suite's tests share.

Each test class works in a database of its own on the server that `run.py` started
(`MANGO_URL`, as the administrator `MANGO_ADMIN`); the helpers speak plain HTTP with
`requests`, as CouchDB's own Mango suite does, so nothing of Settee's is assumed.
"""

import json
import os
import time
import unittest
import uuid

import requests

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture(name):
    """A list of documents from `fixtures/<name>.json`, fresh for each call."""
    with open(os.path.join(HERE, "fixtures", name + ".json"), encoding="utf-8") as file:
        return json.load(file)


USER_DOCS = fixture("user_docs")

# The JSON indexes the user documents are queried with (ddoc and name alike).
USER_INDEXES = [
    ("user_id", ["user_id"]),
    ("name", ["name.last", "name.first"]),
    ("age", ["age"]),
    ("location", ["location.state", "location.city", "location.address.street",
                  "location.address.number"]),
    ("company_and_manager", ["company", "manager"]),
    ("manager", ["manager"]),
    ("favorites", ["favorites"]),
    ("favorites_3", ["favorites.3"]),
    ("twitter", ["twitter"]),
    ("ordered", ["ordered"]),
]


class Refused(Exception):
    """A non-2xx answer: `status` and the decoded `body`."""

    def __init__(self, response):
        self.status = response.status_code
        try:
            self.body = response.json()
        except ValueError:
            self.body = {"raw": response.text}
        super().__init__("%d %s" % (self.status, self.body))


class Database:
    def __init__(self, name):
        self.name = name
        self.url = os.environ["MANGO_URL"].rstrip("/") + "/" + name
        self.http = requests.Session()
        admin = os.environ.get("MANGO_ADMIN")
        if admin:
            self.http.auth = tuple(admin.split(":", 1))
        self.http.headers["Content-Type"] = "application/json"

    # Plain requests, each raising `Refused` unless the answer is 2xx.

    def request(self, method, path="", body=None, raw=None, params=None):
        url = self.url + ("/" + path if path else "")
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        response = self.http.request(method, url, data=data, params=params, timeout=120)
        if response.status_code >= 300:
            raise Refused(response)
        return response.json()

    def create(self):
        self.request("PUT")

    def drop(self):
        try:
            self.request("DELETE")
        except Refused:
            pass

    def reset(self):
        self.drop()
        self.create()

    def save(self, docs, new_edits=True):
        body = {"docs": docs}
        if not new_edits:
            body["new_edits"] = False
        results = self.request("POST", "_bulk_docs", body)
        if new_edits:
            for doc, result in zip(docs, results):
                if "error" in result:
                    raise AssertionError("not saved: %s" % result)
                doc["_id"], doc["_rev"] = result["id"], result["rev"]
        return results

    def get(self, doc_id):
        return self.request("GET", doc_id)

    def delete(self, doc_id):
        rev = self.get(doc_id)["_rev"]
        return self.request("DELETE", doc_id, params={"rev": rev})

    # Indexes.

    def index(self, fields, name=None, ddoc=None, partial=None, selector=None, kind="json"):
        """POST _index; True when it was created, False when it existed."""
        body = {"index": {"fields": fields}, "type": kind}
        if name is not None:
            body["name"] = name
        if ddoc is not None:
            body["ddoc"] = ddoc
        if partial is not None:
            body["index"]["partial_filter_selector"] = partial
        if selector is not None:
            body["index"]["selector"] = selector
        answer = self.request("POST", "_index", body)
        assert answer["id"] and answer["name"], answer
        return answer["result"] == "created"

    def indexes(self, **params):
        query = ";".join("%s=%s" % item for item in params.items())
        return self.request("GET", "_index" + ("?" + query if query else ""))["indexes"]

    def delete_index(self, ddoc, name, kind="json"):
        return self.request("DELETE", "_index/%s/%s/%s" % (ddoc, kind, name))

    # Queries.

    def query(self, endpoint, selector, **options):
        # What CouchDB's own test client always sends, then the options given.
        body = {"selector": selector, "use_index": None, "limit": 25, "skip": 0,
                "conflicts": False}
        for key, value in options.items():
            if value is None:
                continue
            if key == "stats":
                body["execution_stats"] = value
            else:
                body[key] = value
        return self.request("POST", endpoint, body)

    def find(self, selector, **options):
        """The documents `_find` answers."""
        return self.query("_find", selector, **options)["docs"]

    def find_raw(self, selector, **options):
        """`_find`'s whole answer (docs, bookmark, warning, execution_stats)."""
        return self.query("_find", selector, **options)

    def explain(self, selector, **options):
        return self.query("_explain", selector, **options)


def new_database():
    db = Database("mango_" + uuid.uuid4().hex[:12])
    db.create()
    return db


def load_users(db, indexed=True):
    """The fifteen user documents, with their ten JSON indexes unless `indexed` is False."""
    if indexed:
        for name, fields in USER_INDEXES:
            assert db.index(fields, name=name, ddoc=name) is True
    db.save(fixture("user_docs"))


class DatabaseTest(unittest.TestCase):
    """A database of the class's own, dropped after its tests."""

    @classmethod
    def setUpClass(cls):
        cls.db = new_database()

    @classmethod
    def tearDownClass(cls):
        cls.db.drop()

    def assertRefused(self, status, call, *args, error=None, **kwargs):
        with self.assertRaises(Refused) as caught:
            call(*args, **kwargs)
        self.assertEqual(caught.exception.status, status, caught.exception.body)
        if error is not None:
            self.assertEqual(caught.exception.body.get("error"), error, caught.exception.body)
        return caught.exception.body

    def assertUserIds(self, expected, docs):
        self.assertEqual(sorted(expected), sorted(d["user_id"] for d in docs))

    def assertIds(self, expected, docs):
        self.assertEqual(sorted(expected), sorted(d["_id"] for d in docs))


class UserDocs(DatabaseTest):
    """The user documents with their JSON indexes (CouchDB's `UserDocsTests`)."""

    INDEX_TYPE = "json"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        load_users(cls.db)


class UserDocsNoIndexes(DatabaseTest):
    """The user documents with no index but `_all_docs`."""

    INDEX_TYPE = "special"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        load_users(cls.db, indexed=False)


class FreshDatabaseTest(DatabaseTest):
    """A new, empty database for every test."""

    def setUp(self):
        self.db.reset()
