"""22-covering-index-test and 23-explain-indexes-test: when an index answers a query
alone, and `_explain`'s account of every candidate index."""

from mango import UserDocs, UserDocsNoIndexes, USER_INDEXES


class CoveringIndexTests(UserDocs):
    def assertCovered(self, selector, fields, index, use_index=None):
        explain = self.db.explain(selector, fields=fields, use_index=use_index)
        self.assertEqual(explain["index"]["type"], "json")
        self.assertEqual(explain["index"]["name"], index)
        self.assertEqual(explain["mrargs"]["include_docs"], False)
        self.assertEqual(explain["covering"], True)

    def assertNotCovered(self, selector, fields, use_index=None):
        explain = self.db.explain(selector, fields=fields, use_index=use_index)
        self.assertEqual(explain["mrargs"]["include_docs"], True)
        self.assertEqual(explain["covering"], False)

    def test_index_covers_query_1field_index_id(self):
        self.assertCovered({"age": {"$gte": 32}}, ["_id"], "age")

    def test_index_covers_query_2field_index_id(self):
        self.assertCovered({"company": "Lyria", "manager": True}, ["_id"], "company_and_manager")

    def test_index_covers_query_2field_index_extract_field(self):
        self.assertCovered({"company": {"$exists": True}, "manager": True}, ["company"],
                           "company_and_manager")

    def test_index_covers_query_2field_index_extract_field_force_index(self):
        self.assertCovered({"company": {"$exists": True}, "manager": True}, ["company"],
                           "company_and_manager", use_index="company_and_manager")

    def test_index_covers_query_elemMatch(self):
        self.assertCovered({"favorites": {"$elemMatch": {"$eq": "Erlang"}}}, ["favorites"],
                           "favorites")

    def test_index_covers_query_composite_field_id(self):
        self.assertCovered({"name": {"first": "Stephanie", "last": "Kirkland"}}, ["_id"], "name")

    def test_index_does_not_cover_query_empty_selector(self):
        self.assertNotCovered({}, ["_id"])

    def test_index_does_not_cover_query_field_not_in_index(self):
        self.assertNotCovered({"age": {"$gte": 32}}, ["name"])

    def test_index_does_not_cover_query_all_fields(self):
        self.assertNotCovered({"age": {"$gte": 32}}, None)

    def test_index_does_not_cover_query_partial_selector_id(self):
        self.assertNotCovered({"location.state": "Nevada"}, ["_id"])

    def test_index_does_not_cover_query_partial_selector(self):
        self.assertNotCovered({"name.last": "Hernandez"}, ["name.first"])

    def test_index_does_not_cover_selector_with_more_fields(self):
        self.assertNotCovered({"$and": [{"age": {"$ne": 23}},
                                        {"twitter": {"$not": {"$regex": "^@.*[0-9]+$"}}},
                                        {"location.address.number": {"$gt": 4288}},
                                        {"location.city": {"$ne": "Pico Rivera"}}]},
                              ["twitter"], use_index="twitter")

    def test_covering_index_provides_correct_answer_2field_index(self):
        docs = self.db.find({"company": {"$exists": True}, "manager": True},
                            sort=[{"company": "asc"}], fields=["company"],
                            use_index="company_and_manager")
        self.assertEqual(docs, [{"company": c} for c in [
            "Affluex", "Globoil", "Lyria", "Manglo", "Myopium", "Niquent", "Oulu", "Prosely",
            "Tasmania", "Zialactic"]])

    def test_covering_index_provides_correct_answer_id(self):
        # In the order of the age index.
        docs = self.db.find({"age": {"$gte": 32}}, fields=["_id"])
        self.assertEqual([d["_id"][:8] for d in docs], [
            "659d0430", "48ca0455", "e900001d", "b31dad3f", "71562648", "c78c529f", "8e1c90c0",
            "6c0afcf1", "5b61abc1", "a33d5457", "b06aadcf", "b1e70402", "0461444c"])


ALL_DOCS = {"ddoc": None, "name": "_all_docs", "type": "special", "def": {"fields": [{"_id": "asc"}]}}


def json_candidate(name, fields):
    return {
        "index": {"ddoc": "_design/" + name, "name": name, "type": "json", "partitioned": False,
                  "def": {"fields": [{field: "asc"} for field in fields]}},
        "analysis": {"usable": False, "reasons": [{"name": "field_mismatch"}], "ranking": 2,
                     "covering": False},
    }


class ExplainIndexJSONTests(UserDocs):
    def test_basic(self):
        explain = self.db.explain({"age": 23})
        # Every index but the one used, unusable ones first in CouchDB's order (by
        # design document, descending), then _all_docs, usable but of a type less favoured.
        order = ["user_id", "twitter", "ordered", "name", "manager", "location", "favorites_3",
                 "favorites", "company_and_manager"]
        fields = dict(USER_INDEXES)
        expected = [json_candidate(name, fields[name]) for name in order] + [{
            "index": ALL_DOCS,
            "analysis": {"usable": True, "reasons": [{"name": "unfavored_type"}], "ranking": 1,
                         "covering": None},
        }]
        self.assertEqual(explain["index_candidates"], expected)
        self.assertEqual(explain["selector_hints"][0], {
            "type": "json", "indexable_fields": ["age"], "unindexable_fields": []})


class ExplainIndexTestsNoIndexes(UserDocsNoIndexes):
    def test_basic(self):
        explain = self.db.explain({"age": 23})
        self.assertEqual(explain["index_candidates"], [])
        self.assertIsNotNone(explain["index"])
        self.assertEqual(explain["partitioned"], False)

    def test_no_usable_index(self):
        # No index can sort by company: _explain answers with the reason rather than
        # refusing, and no index.
        explain = self.db.explain({"age": 23}, sort=["company"])
        self.assertEqual(explain["index_candidates"], [{
            "index": ALL_DOCS,
            "analysis": {"usable": False, "reasons": [{"name": "field_mismatch"}], "ranking": 1,
                         "covering": None},
        }])
        self.assertIsNone(explain["index"])
        self.assertEqual(explain["partitioned"], False)
