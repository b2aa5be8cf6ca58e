"""13-stable-update-test and 13-users-db-find-test: `update: false` reads an index as it
is, and `_find` works in `_users` for its administrator."""

import unittest

from mango import Database, FreshDatabaseTest, Refused, fixture


class SupportStableAndUpdate(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.index(["name"])
        self.db.save([{"_id": "54af50626de419f5109c962f", "user_id": 0, "age": 10, "name": "Jimi",
                       "location": "UK", "number": 4},
                      {"_id": "54af50622071121b25402dc3", "user_id": 1, "age": 12, "name": "Eddie",
                       "location": "ZAR", "number": 2}])

    def test_update_updates_view_when_specified(self):
        # CouchDB finds nothing here with update: false, its index not yet built for the
        # documents. Settee's indexes are written with the documents and are never behind,
        # so both answers are the current one (docs/server.md says why).
        self.assertEqual(len(self.db.find({"name": "Eddie"}, update=False)), 1)
        self.assertEqual(len(self.db.find({"name": "Eddie"}, update=True)), 1)


class UsersDbFindCases:
    @classmethod
    def setUpClass(cls):
        cls.db = Database("_users")
        try:
            cls.db.create()
        except Refused:
            pass
        for user in fixture("users"):
            try:
                cls.db.delete(user["_id"])
            except Refused:
                pass
        cls.db.save(fixture("users"))

    @classmethod
    def tearDownClass(cls):
        for user in fixture("users"):
            cls.db.delete(user["_id"])

    def ids(self, docs):
        return [d["_id"] for d in docs]

    def test_simple_find(self):
        self.assertEqual(self.ids(self.db.find({"name": {"$eq": "demo02"}})),
                         ["org.couchdb.user:demo02"])

    def test_multi_cond_and(self):
        self.db.index(["type", "roles"])
        docs = self.db.find({"type": "user", "roles": {"$eq": ["reader"]}})
        self.assertEqual(self.ids(docs), ["org.couchdb.user:demo02"])

    def test_multi_cond_or(self):
        docs = self.db.find({"$and": [{"type": "user"}, {"$or": [{"order": 1}, {"order": 3}]}]})
        self.assertEqual(self.ids(docs), ["org.couchdb.user:demo01", "org.couchdb.user:demo03"])

    def test_sort(self):
        self.db.index(["order", "name"])
        for direction in ["asc", "desc"]:
            with self.subTest(direction=direction):
                docs = self.db.find({"name": {"$gt": "demo01"}}, sort=[{"order": direction}])
                self.assertEqual([d["order"] for d in docs], [2, 3] if direction == "asc" else [3, 2])

    def test_fields(self):
        docs = self.db.find({"name": {"$eq": "demo02"}}, fields=["name", "order"])
        self.assertEqual(docs, [{"name": "demo02", "order": 2}])

    def test_empty(self):
        self.assertEqual(len(self.db.find({})), 3)


class UsersDbFindTests(UsersDbFindCases, unittest.TestCase):
    pass


class UsersDbIndexFindTests(UsersDbFindCases, unittest.TestCase):
    def setUp(self):
        self.db.index(["name"])

    def test_multi_cond_or(self):
        self.db.index(["type", "order"])
        super().test_multi_cond_or()
