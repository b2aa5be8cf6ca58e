"""03-operator-test: each operator over the user documents, through their JSON indexes
and through `_all_docs` alone."""

from mango import UserDocs, UserDocsNoIndexes


class OperatorCases:
    def test_all(self):
        docs = self.db.find({"manager": True, "favorites": {"$all": ["Lisp", "Python"]}})
        self.assertUserIds([2, 12, 9], docs)

    def test_all_non_array(self):
        self.assertEqual(self.db.find({"manager": True, "location": {"$all": ["Ohai"]}}), [])

    def test_elem_match(self):
        self.db.save([{"user_id": "a", "bang": [{"foo": 1, "bar": 2}]},
                      {"user_id": "b", "bang": [{"foo": 2, "bam": True}]}])
        docs = self.db.find({"_id": {"$gt": None},
                             "bang": {"$elemMatch": {"foo": {"$gte": 1}, "bam": True}}})
        self.assertUserIds(["b"], docs)

    def test_all_match(self):
        self.db.save([{"user_id": "a", "bang": [{"foo": 1, "bar": 2}, {"foo": 3, "bar": 4}]},
                      {"user_id": "b", "bang": [{"foo": 1, "bar": 2}, {"foo": 4, "bar": 4}]}])
        docs = self.db.find({"bang": {"$allMatch": {"foo": {"$mod": [2, 1]},
                                                     "bar": {"$mod": [2, 0]}}}})
        self.assertUserIds(["a"], docs)

    def test_empty_all_match(self):
        self.db.save([{"bad_doc": "a", "emptybang": []}])
        self.assertEqual(self.db.find({"emptybang": {"$allMatch": {"foo": {"$eq": 2}}}}), [])

    def test_in_operator_array(self):
        docs = self.db.find({"manager": True, "favorites": {"$in": ["Ruby", "Python"]}})
        self.assertUserIds([2, 6, 7, 9, 11, 12], docs)

    def test_nin_operator_array(self):
        docs = self.db.find({"manager": True, "favorites": {"$nin": ["Erlang", "Python"]}})
        self.assertEqual(len(docs), 4)
        for doc in docs:
            if isinstance(doc["favorites"], list):
                self.assertNotIn("Erlang", doc["favorites"])
                self.assertNotIn("Python", doc["favorites"])

    def test_regex(self):
        docs = self.db.find({"age": {"$gt": 40}, "location.state": {"$regex": "(?i)new.*"}})
        self.assertUserIds([2, 10], docs)

    def test_exists_false(self):
        docs = self.db.find({"age": {"$gt": 0}, "twitter": {"$exists": False}})
        self.assertUserIds([2, 3, 5, 6, 7, 8, 10, 11, 12, 14], docs)
        for doc in docs:
            self.assertNotIn("twitter", doc)

    def test_eq_null_does_not_include_missing(self):
        docs = self.db.find({"age": {"$gt": 0}, "twitter": None})
        self.assertUserIds([9], docs)

    def test_ne_includes_null_but_not_missing(self):
        docs = self.db.find({"twitter": {"$ne": "notamatch"}})
        self.assertUserIds([0, 1, 4, 9, 13], docs)
        for doc in docs:
            self.assertIn("twitter", doc)

    def test_lt_includes_null_but_not_missing(self):
        docs = self.db.find({"twitter": {"$lt": 1}})
        self.assertUserIds([9], docs)
        self.assertEqual([d["twitter"] for d in docs], [None])

    def test_lte_includes_null_but_not_missing(self):
        docs = self.db.find({"twitter": {"$lte": 1}})
        self.assertUserIds([9], docs)

    def test_lte_null_includes_null_but_not_missing(self):
        docs = self.db.find({"twitter": {"$lte": None}})
        self.assertUserIds([9], docs)

    def test_lte_at_z_except_null_excludes_null_and_missing(self):
        docs = self.db.find({"twitter": {"$and": [{"$lte": "@z"}, {"$ne": None}]}})
        self.assertUserIds([0, 1, 4, 13], docs)

    def test_range_gte_null_includes_null_but_not_missing(self):
        docs = self.db.find({"twitter": {"$gte": None}})
        self.assertUserIds([0, 1, 4, 9, 13], docs)

    def test_exists_false_returns_missing_but_not_null(self):
        docs = self.db.find({"twitter": {"$exists": False}})
        # Other tests of the class add documents without twitter: only the users counted.
        users = [d for d in docs if isinstance(d.get("user_id"), int)]
        self.assertUserIds([2, 3, 5, 6, 7, 8, 10, 11, 12, 14], users)
        for doc in docs:
            self.assertNotIn("twitter", doc)

    def test_lte_respects_unicode_collation(self):
        # null < false < true < numbers < "a" < "A" < "aa" in CouchDB's collation.
        self.assertUserIds([7, 8, 9, 10, 11, 12], self.db.find({"ordered": {"$lte": "a"}}))

    def test_gte_respects_unicode_collation(self):
        self.assertUserIds([12, 13, 14], self.db.find({"ordered": {"$gte": "a"}}))


class OperatorJSONTests(UserDocs, OperatorCases):
    pass


class OperatorAllDocsTests(UserDocsNoIndexes, OperatorCases):
    def test_range_id_eq(self):
        doc_id = "8e1c90c0-ac18-4832-8081-40d14325bde0"
        args = self.db.explain({"_id": doc_id})["mrargs"]
        self.assertEqual((args["start_key"], args["end_key"]), (doc_id, doc_id))
