"""05-index-selection-test: which index `_find` reads, `use_index` and its warnings."""

from mango import Refused, UserDocs

NOT_VALID = "{0} was not used because it does not contain a valid index for this query."


class IndexSelectionTests(UserDocs):
    def index_of(self, selector, **options):
        return self.db.explain(selector, **options)["index"]

    def first_warning_line(self, answer):
        return answer["warning"].split("\n")[0].lower()

    def test_basic(self):
        self.assertEqual(self.index_of({"age": 123})["type"], "json")

    def test_with_and(self):
        selector = {"name.first": "Stephanie", "name.last": "This doesn't have to match anything."}
        self.assertEqual(self.index_of(selector)["type"], "json")

    def test_with_nested_and(self):
        selector = {"name.first": {"$gt": "a", "$lt": "z"}, "name.last": "Foo"}
        self.assertEqual(self.index_of(selector)["type"], "json")

    def test_with_or(self):
        selector = {"company": {"$gt": "a", "$lt": "z"},
                    "$or": [{"manager": "Foo"}, {"manager": "Bar"}]}
        self.assertEqual(self.index_of(selector)["ddoc"], "_design/company_and_manager")

    def test_use_most_columns(self):
        selector = {"name.first": "Stephanie", "name.last": "Something or other",
                    "age": {"$gt": 1}}
        self.assertNotEqual(self.index_of(selector)["ddoc"], "_design/age")
        self.assertEqual(self.index_of(selector, use_index="_design/age")["ddoc"], "_design/age")

    def test_no_valid_sort_index(self):
        self.assertRefused(400, self.db.find, {"_id": {"$gt": None}}, sort=["name"])

    def test_invalid_use_index(self):
        answer = self.db.find_raw({}, use_index="_design/age")
        self.assertEqual(self.first_warning_line(answer), NOT_VALID.format("_design/age"))

    def test_uses_index_when_no_range_or_equals(self):
        # The selector requires manager to exist: its index serves, scanned whole.
        selector = {"manager": {"$exists": True}}
        self.assertEqual(len(self.db.find(selector)), 14)
        self.assertEqual(self.index_of(selector)["type"], "json")

    def test_reject_use_index_invalid_fields(self):
        answer = self.db.find_raw({"company": "Pharmex"}, use_index="_design/company_and_manager")
        self.assertEqual(self.first_warning_line(answer),
                         NOT_VALID.format("_design/company_and_manager"))
        self.assertEqual([d["company"] for d in answer["docs"]], ["Pharmex"])

    def test_reject_use_index_ddoc_and_name_invalid_fields(self):
        ddoc, name = "_design/company_and_manager", "company_and_manager"
        answer = self.db.find_raw({"company": "Pharmex"}, use_index=[ddoc, name])
        self.assertEqual(
            self.first_warning_line(answer),
            "{0}, {1} was not used because it is not a valid index for this query.".format(ddoc, name))
        self.assertEqual([d["company"] for d in answer["docs"]], ["Pharmex"])

    def test_reject_use_index_sort_order(self):
        # No index on company alone could serve the sort instead.
        self.assertRefused(400, self.db.find, {"company": {"$gt": None}},
                           use_index="_design/company_and_manager", sort=[{"company": "desc"}])

    def test_use_index_fallback_if_valid_sort(self):
        valid, invalid = "_design/fallbackfoo", "_design/fallbackfoobar"
        self.db.index(["foo"], ddoc=invalid)
        self.db.index(["foo", "bar"], ddoc=valid)
        options = {"sort": ["foo", "bar"], "use_index": invalid}
        self.assertEqual(self.index_of({"foo": {"$gt": None}}, **options)["ddoc"], valid)
        answer = self.db.find_raw({"foo": {"$gt": None}}, **options)
        self.assertEqual(self.first_warning_line(answer), NOT_VALID.format(invalid))
        self.assertEqual(answer["docs"], [])

    def test_prefer_use_index_over_optimal_index(self):
        preferred = "_design/testsuboptimal"
        self.db.index(["baz"], ddoc=preferred)
        self.db.index(["baz", "bar"])
        selector = {"baz": {"$gt": None}, "bar": {"$gt": None}}
        self.assertNotIn("warning", self.db.find_raw(selector, use_index=preferred))
        self.assertEqual(self.index_of(selector, use_index=preferred)["ddoc"], preferred)

    def test_manual_bad_view_idx01(self):
        # A "query" design document whose views are not Mango's: refused as CouchDB's
        # design document validation refuses it.
        design = {
            "_id": "_design/bad_view_index", "language": "query",
            "views": {"views001": {"map": "function(employee){if(employee.training)"
                                          "{emit(employee.number, employee.training);}}"}},
        }
        with self.assertRaises(Refused) as caught:
            self.db.request("PUT", design["_id"], design)
        self.assertEqual(caught.exception.body["error"], "invalid_design_doc")

    def test_explain_sort_reverse(self):
        index = self.index_of({"manager": {"$gt": None}}, fields=["manager"],
                              sort=[{"manager": "desc"}])
        self.assertEqual(index["type"], "json")

    def test_uses_all_docs_when_fields_do_not_match_selector(self):
        # The index on [company, manager] would miss documents without manager.
        docs = self.db.find({"company": "Pharmex"})
        self.assertEqual([d["company"] for d in docs], ["Pharmex"])
        self.assertNotIn("manager", docs[0])
        self.assertEqual(self.index_of({"company": "Pharmex"})["type"], "special")

    def test_uses_all_docs_when_selector_doesnt_require_fields_to_exist(self):
        selector = {"company": "Pharmex", "manager": {"$exists": False}}
        docs = self.db.find(selector)
        self.assertEqual([d["company"] for d in docs], ["Pharmex"])
        self.assertEqual(self.index_of(selector)["type"], "special")
