"""25-beginswith-test: `$beginsWith`, matched and turned into an index range."""

from mango import FreshDatabaseTest

DOCS = [
    {"_id": "aaa", "name": "Jimi", "location": "AUS", "age": 27},
    {"_id": "abc", "name": "Eddie", "location": "AND", "age": 65},
    {"_id": "bbb", "name": "Harry", "location": "CAN", "age": 21},
    {"_id": "ccc", "name": "Eddie", "location": "DEN", "age": 37},
    {"_id": "ddd", "name": "Jones", "location": "ETH", "age": 49},
]

# The range's end: the prefix followed by U+FFFD, then <MAX> for the index's other rows.
END = "\ufffd"


class BeginsWithOperator(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in DOCS])
        self.db.index(["location"])
        self.db.index(["name", "location"])

    def mrargs(self, selector, **options):
        return self.db.explain(selector, **options)["mrargs"]

    def test_basic(self):
        self.assertIds(["aaa", "abc"], self.db.find({"location": {"$beginsWith": "A"}}))

    def test_json_range(self):
        args = self.mrargs({"location": {"$beginsWith": "A"}})
        self.assertEqual(args["start_key"], ["A"])
        self.assertEqual(args["end_key"], ["A" + END, "<MAX>"])

    def test_compound_key(self):
        selector = {"name": "Eddie", "location": {"$beginsWith": "A"}}
        args = self.mrargs(selector)
        self.assertEqual(args["start_key"], ["Eddie", "A"])
        self.assertEqual(args["end_key"], ["Eddie", "A" + END, "<MAX>"])
        self.assertIds(["abc"], self.db.find(selector))

    def test_sort(self):
        args = self.mrargs({"location": {"$beginsWith": "A"}}, sort=["location"])
        self.assertEqual((args["start_key"], args["end_key"]), (["A"], ["A" + END, "<MAX>"]))
        self.assertEqual(args["direction"], "fwd")

    def test_sort_desc(self):
        # Read backwards: the keys swap, the range now ending at the prefix itself.
        args = self.mrargs({"location": {"$beginsWith": "A"}}, sort=[{"location": "desc"}])
        self.assertEqual(args["end_key"], ["A"])
        self.assertEqual(args["direction"], "rev")

    def test_all_docs_range(self):
        args = self.mrargs({"_id": {"$beginsWith": "a"}})
        self.assertEqual((args["start_key"], args["end_key"]), ("a", "a" + END))

    def test_no_index(self):
        explain = self.db.explain({"foo": {"$beginsWith": "a"}})
        self.assertEqual(explain["index"]["type"], "special")
        self.assertEqual((explain["mrargs"]["start_key"], explain["mrargs"]["end_key"]),
                         (None, "<MAX>"))

    def test_invalid_operand(self):
        self.assertRefused(400, self.db.find, {"_id": {"$beginsWith": True}},
                           error="invalid_operator")

    def test_does_not_match_non_string_value(self):
        self.assertEqual(self.db.find({"age": {"$beginsWith": "a"}}), [])

    def test_no_matches(self):
        self.assertEqual(self.db.find({"name": {"$beginsWith": "Z"}}), [])

    def test_case_sensitivity(self):
        self.assertEqual(self.db.find({"name": {"$beginsWith": "j"}}), [])
        self.assertEqual(len(self.db.find({"name": {"$beginsWith": "J"}})), 2)
