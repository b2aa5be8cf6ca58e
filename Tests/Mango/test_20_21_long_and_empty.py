"""20-no-timeout-test and 21-empty-selector-tests: a query over 100,000 documents that
matches none finishes, and empty `$or`, `$and`, `$in`, `$all`, `$nin` mean what CouchDB
says they mean."""

from mango import DatabaseTest, UserDocs, UserDocsNoIndexes, USER_DOCS


class LongRunningMangoTest(DatabaseTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db.index(["value"])
        for start in range(0, 100000, 1000):
            cls.db.save([{"_id": str(n), "another": "field", "value": n}
                         for n in range(start, start + 1000)])

    def test_query_does_not_time_out(self):
        # Through _all_docs, then through the index: every row read, none matching.
        self.assertEqual(self.db.find({"_id": {"$gt": 0}, "another": "wrong"}), [])
        self.assertEqual(self.db.find({"value": {"$gt": 0}, "another": "wrong"}), [])


class EmptySelectorCases:
    def check(self, selector, count):
        self.assertEqual(self.db.explain(selector)["index"]["type"], self.INDEX_TYPE)
        self.assertEqual(len(self.db.find(selector)), count)

    def test_empty(self):
        self.assertEqual(self.db.explain({})["index"]["type"], "special")

    def test_empty_array_or(self):
        self.check({"$or": []}, 0)

    def test_empty_array_or_with_age(self):
        self.check({"age": 22, "$or": []}, 1)

    def test_empty_array_in_with_age(self):
        self.check({"age": 22, "company": {"$in": []}}, 0)

    def test_empty_array_and_with_age(self):
        self.check({"age": 22, "$and": []}, 1)

    def test_empty_array_all_age(self):
        self.check({"age": 22, "company": {"$all": []}}, 0)

    def test_empty_array_nested_all_with_age(self):
        self.check({"age": 22, "$and": [{"company": {"$all": []}}]}, 0)

    def test_empty_arrays_complex(self):
        self.check({"$or": [], "a": {"$in": []}}, 0)

    def test_empty_nin(self):
        self.check({"favorites": {"$nin": []}}, len(USER_DOCS))


class EmptySelectorNoIndexTests(UserDocsNoIndexes, EmptySelectorCases):
    pass


class EmptySelectorUserDocTests(UserDocs, EmptySelectorCases):
    pass
