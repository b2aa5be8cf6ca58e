"""16-index-selectors-test and 17-multi-type-value-test: partial indexes (and the old
`selector` spelling in design documents), and fields whose values differ in type."""

from mango import DatabaseTest, FreshDatabaseTest

PEOPLE = [
    {"_id": "%d00" % n, "name": name, "location": location, "user_id": n, "same": "value"}
    for n, name, location in [(1, "Jimi", "AUS"), (2, "Eddie", "BRA"), (3, "Harry", "CAN"),
                              (4, "Eddie", "DEN"), (5, "Jones", "ETH"), (6, "Winnifried", "FRA"),
                              (7, "Marilyn", "GHA"), (8, "Sandra", "ZAR")]
]

FROM_FRA = {"location": {"$gte": "FRA"}}


def query_design(name, map_member):
    return {"_id": "_design/" + name, "language": "query",
            "views": {name: {"map": map_member, "reduce": "_count",
                             "options": {"def": {"fields": ["location"]}}}}}


class IndexSelectorJson(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in PEOPLE])

    def test_saves_partial_filter_selector_in_index(self):
        self.db.index(["location"], partial=FROM_FRA)
        self.assertEqual(self.db.indexes()[1]["def"]["partial_filter_selector"], FROM_FRA)

    def test_partial_filter_only_in_return_if_not_default(self):
        self.db.index(["location"])
        self.assertNotIn("partial_filter_selector", self.db.indexes()[1]["def"])

    def test_saves_selector_in_index_throws(self):
        self.assertRefused(400, self.db.index, ["location"], selector=FROM_FRA)

    def test_uses_partial_index_for_query_selector(self):
        self.db.index(["location"], partial=FROM_FRA, ddoc="Selected", name="Selected")
        self.assertEqual(self.db.explain(FROM_FRA, use_index="Selected")["index"]["name"], "Selected")
        self.assertEqual(len(self.db.find(FROM_FRA, use_index="Selected")), 3)

    def test_uses_partial_index_with_different_selector(self):
        # The index holds only what its own selector lets in, whatever the query asks.
        self.db.index(["location"], partial=FROM_FRA, ddoc="Selected", name="Selected")
        wider = {"location": {"$gte": "A"}}
        self.assertEqual(self.db.explain(wider, use_index="Selected")["index"]["name"], "Selected")
        self.assertEqual(len(self.db.find(wider, use_index="Selected")), 3)

    def test_doesnot_use_selector_when_not_specified(self):
        self.db.index(["location"], partial=FROM_FRA, ddoc="Selected", name="Selected")
        self.assertEqual(self.db.explain(FROM_FRA)["index"]["name"], "_all_docs")

    def test_doesnot_use_selector_when_not_specified_with_index(self):
        self.db.index(["location"], partial=FROM_FRA, ddoc="Selected", name="Selected")
        self.db.index(["location"], name="NotSelected")
        self.assertEqual(self.db.explain(FROM_FRA)["index"]["name"], "NotSelected")

    def test_old_selector_with_no_selector_still_supported(self):
        self.db.save([query_design("oldschoolnoselector", {"fields": {"location": "asc"}})])
        explain = self.db.explain(FROM_FRA, use_index="oldschoolnoselector")
        self.assertEqual(explain["index"]["name"], "oldschoolnoselector")
        self.assertEqual(len(self.db.find(FROM_FRA, use_index="oldschoolnoselector")), 3)

    def test_old_selector_still_supported(self):
        self.db.save([query_design("oldschool", {"fields": {"location": "asc"},
                                                 "selector": FROM_FRA})])
        self.assertEqual(self.db.explain(FROM_FRA, use_index="oldschool")["index"]["name"],
                         "oldschool")
        self.assertEqual(len(self.db.find(FROM_FRA, use_index="oldschool")), 3)


MIXED = [
    {"_id": "1", "name": "Jimi", "age": 10},
    {"_id": "2", "name": {"forename": "Eddie"}, "age": 20},
    {"_id": "3", "name": None, "age": 30},
    {"_id": "4", "name": 1, "age": 40},
    {"_id": "5", "forename": "Sam", "age": 50},
]


class MultiValueFieldCases:
    def test_can_query_with_name(self):
        self.assertIds(["1", "2", "3", "4"], self.db.find({"name": {"$exists": True}}))

    def test_can_query_with_name_subfield(self):
        self.assertIds(["2"], self.db.find({"name.forename": {"$exists": True}}))

    def test_can_query_with_name_range(self):
        # Numbers from 0 up, then strings, then objects: "Jimi", 1 and {"forename": ...}.
        self.assertIds(["1", "2", "4"], self.db.find({"name": {"$gte": 0}}))

    def test_can_query_with_age_and_name_range(self):
        self.assertIds(["1", "2"], self.db.find({"age": {"$gte": 0, "$lt": 40},
                                                 "name": {"$gte": 0}}))


class MultiValueFieldJSONTests(FreshDatabaseTest, MultiValueFieldCases):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in MIXED])
        self.db.index(["name"])
        self.db.index(["age", "name"])


class MultiValueFieldAllDocsTests(FreshDatabaseTest, MultiValueFieldCases):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in MIXED])
