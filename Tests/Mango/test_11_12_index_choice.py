"""11-ignore-design-docs-test and 12-use-correct-index-test: design documents stay out
of `_all_docs` queries, and among usable indexes CouchDB's choice is made."""

from mango import DatabaseTest, FreshDatabaseTest


class IgnoreDesignDocsForAllDocsIndexTests(DatabaseTest):
    def test_should_not_return_design_docs(self):
        self.db.save([{"_id": "_design/my-design-doc"},
                      {"_id": "54af50626de419f5109c962f", "user_id": 0, "age": 10, "name": "Jimi"},
                      {"_id": "54af50622071121b25402dc3", "user_id": 1, "age": 11, "name": "Eddie"}])
        self.assertEqual(len(self.db.find({"_id": {"$gte": None}})), 2)


DOCS = [
    {"_id": "_design/my-design-doc"},
    {"_id": "54af50626de419f5109c962f", "user_id": 0, "age": 10, "name": "Jimi",
     "location": "UK", "number": 4},
    {"_id": "54af50622071121b25402dc3", "user_id": 1, "age": 12, "name": "Eddie",
     "location": "ZAR", "number": 2},
    {"_id": "54af50622071121b25402dc6", "user_id": 1, "age": 6, "name": "Harry",
     "location": "US", "number": 8},
    {"_id": "54af50622071121b25402dc9", "name": "Eddie", "occupation": "engineer", "number": 7},
]


class ChooseCorrectIndexForDocs(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in DOCS])

    def chosen(self, selector, indexes):
        for fields, ddoc in indexes:
            self.db.index(fields, ddoc=ddoc)
        return self.db.explain(selector)["index"]

    def test_choose_index_with_one_field_in_index(self):
        index = self.chosen({"name": "Eddie"}, [(["name", "age", "user_id"], "aaa"), (["name"], "zzz")])
        self.assertEqual(index["ddoc"], "_design/zzz")

    def test_choose_index_with_two(self):
        index = self.chosen({"name": "Eddie", "age": {"$gte": 12}},
                            [(["name", "age", "user_id"], "aaa"), (["name", "age"], "bbb"),
                             (["name"], "zzz")])
        self.assertEqual(index["ddoc"], "_design/bbb")

    def test_choose_index_alphabetically(self):
        index = self.chosen({"name": "Eddie", "age": {"$gte": 12}},
                            [(["name"], "aaa"), (["name"], "bbb"), (["name"], "zzz")])
        self.assertEqual(index["ddoc"], "_design/aaa")

    def test_choose_index_most_accurate(self):
        index = self.chosen({"name": "Eddie", "age": {"$gte": 12}},
                            [(["name", "age", "user_id"], "aaa"), (["name", "age"], "bbb"),
                             (["name"], "zzz")])
        self.assertEqual(index["ddoc"], "_design/bbb")

    def test_choose_index_most_accurate_in_memory_selector(self):
        index = self.chosen({"name": "Eddie", "number": {"$lte": 12}},
                            [(["name", "location", "user_id"], "aaa"),
                             (["name", "age", "user_id"], "bbb"), (["name"], "zzz")])
        self.assertEqual(index["ddoc"], "_design/zzz")

    def test_warn_on_full_db_scan(self):
        selector = {"not_indexed": "foo"}
        self.assertEqual(self.db.explain(selector)["index"]["type"], "special")
        warning = self.db.find_raw(selector)["warning"]
        self.assertEqual(warning.split("\n")[0].lower(),
                         "no matching index found, create an index to optimize query time.")

    def test_chooses_idxA(self):
        self.db.save([{"a": 1, "b": 1, "c": 1}, {"a": 1000, "d": 1000, "e": 1000}])
        index = self.chosen({"a": {"$gt": 0}, "b": {"$gt": 0}, "c": {"$gt": 0}},
                            [(["a", "b", "c"], None), (["a", "d", "e"], None)])
        self.assertEqual(index["def"]["fields"], [{"a": "asc"}, {"b": "asc"}, {"c": "asc"}])

    def test_can_query_with_range_on_secondary_column(self):
        self.db.index(["age", "name"], ddoc="bbb")
        selector = {"age": 10, "name": {"$gte": 0}}
        self.assertEqual(len(self.db.find(selector)), 1)
        explain = self.db.explain(selector)
        self.assertEqual(explain["index"]["ddoc"], "_design/bbb")
        self.assertEqual(explain["mrargs"]["end_key"], [10, "<MAX>"])

    def test_choose_index_with_id(self):
        # Every document has _id and _rev: they do not make an index unusable.
        self.assertEqual(self.chosen({"name": "Eddie"}, [(["name", "_id"], "aaa")])["ddoc"],
                         "_design/aaa")

    def test_choose_index_with_rev(self):
        self.assertEqual(self.chosen({"name": "Eddie"}, [(["name", "_rev"], "aaa")])["ddoc"],
                         "_design/aaa")
