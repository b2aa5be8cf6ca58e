"""02-basic-find-test: the request's members, and simple queries over the user documents."""

import json

from mango import UserDocs


class BasicFindTests(UserDocs):
    def refused_with(self, member, values):
        for value in values:
            with self.subTest(member=member, value=value):
                body = {"selector": {"int": {"$gt": 2}}, member: value}
                self.assertRefused(400, self.db.request, "POST", "_find", body)

    def test_bad_selector(self):
        for selector in [None, True, False, 1.0, "foobarbaz", {"foo": {"$not_an_op": 2}},
                         {"$gt": 2}, [None, "bing"]]:
            with self.subTest(selector=selector):
                self.assertRefused(400, self.db.find, selector)

    def test_bad_limit(self):
        self.refused_with("limit", [None, True, False, -1, 1.2, "no limit!", {"foo": "bar"}, [2]])

    def test_bad_skip(self):
        self.refused_with("skip", [None, True, False, -3, 1.2, "no limit!", {"foo": "bar"}, [2]])

    def test_bad_sort(self):
        self.refused_with("sort", [None, True, False, 1.2, "no limit!", {"foo": "bar"}, [2],
                                   [{"foo": "asc", "bar": "asc"}],
                                   [{"foo": "asc"}, {"bar": "desc"}]])

    def test_bad_fields(self):
        self.refused_with("fields", [None, True, False, 1.2, "no limit!", {"foo": "bar"}, [2],
                                     [[]], ["foo", 2.0]])

    def test_bad_r(self):
        self.refused_with("r", [None, True, False, 1.2, "no limit!", {"foo": "bar"}, [2]])

    def test_bad_conflicts(self):
        self.refused_with("conflicts", [None, 1.2, "no limit!", {"foo": "bar"}, [2]])

    def user_ids(self, selector, **options):
        return [d["user_id"] for d in self.db.find(selector, **options)]

    def test_simple_find(self):
        # In the order of the index on age.
        self.assertEqual(self.user_ids({"age": {"$lt": 35}}), [9, 1, 7])

    def test_multi_cond_and(self):
        self.assertEqual(self.user_ids({"manager": True, "location.city": "Longbranch"}), [7])

    def test_multi_cond_duplicate_field(self):
        # JSON with the same member twice: the last one counts, as in CouchDB.
        body = ('{"selector":{"location.city":{"$regex": "^L+"},'
                '"location.city":{"$exists":true}}}')
        answer = self.db.request("POST", "_find", raw=body)
        self.assertEqual(len(answer["docs"]), 15)

    def test_multi_cond_or(self):
        selector = {"$and": [{"age": {"$gte": 75}},
                             {"$or": [{"name.first": "Mathis"}, {"name.first": "Whitley"}]}]}
        self.assertEqual(self.user_ids(selector), [11, 13])

    def test_multi_col_idx(self):
        selector = {"location.state": {"$and": [{"$gt": "Hawaii"}, {"$lt": "Maine"}]},
                    "location.city": {"$lt": "Longbranch"}}
        self.assertEqual(self.user_ids(selector), [6])

    def test_missing_not_indexed(self):
        self.assertEqual(self.user_ids({"favorites.3": "C"}), [6])
        self.assertEqual(self.user_ids({"favorites.3": None}), [])
        # In the order of the index on twitter: "@abbottwatson" first.
        self.assertEqual(self.user_ids({"twitter": {"$gt": None}}), [1, 4, 0, 13])

    def test_limit(self):
        self.assertEqual(len(self.db.find({"age": {"$gt": 0}})), 15)
        for limit in [0, 1, 5, 14]:
            with self.subTest(limit=limit):
                self.assertEqual(len(self.db.find({"age": {"$gt": 0}}, limit=limit)), limit)

    def test_skip(self):
        for skip in [0, 1, 5, 14]:
            with self.subTest(skip=skip):
                self.assertEqual(len(self.db.find({"age": {"$gt": 0}}, skip=skip)), 15 - skip)

    def test_sort(self):
        for direction in ["asc", "desc"]:
            with self.subTest(direction=direction):
                docs = self.db.find({"age": {"$gt": 0}}, sort=[{"age": direction}])
                expected = sorted(docs, key=lambda d: d["age"], reverse=direction == "desc")
                self.assertEqual(docs, expected)

    def test_sort_desc_complex(self):
        docs = self.db.find({"company": {"$lt": "M"},
                             "$or": [{"company": "Dreamia"}, {"manager": True}]},
                            sort=[{"company": "desc"}, {"manager": "desc"}])
        companies = [d["company"] for d in docs]
        self.assertEqual(companies, sorted(companies, reverse=True))
        self.assertTrue(companies)

    def test_sort_with_primary_sort_not_in_selector(self):
        self.assertRefused(400, self.db.find, {"name.last": {"$lt": "M"}},
                           sort=[{"name.first": "desc"}], error="no_usable_index")

    def test_sort_exists_true(self):
        docs = self.db.find({"age": {"$gt": 0, "$exists": True}}, sort=[{"age": "asc"}])
        self.assertEqual(docs, sorted(docs, key=lambda d: d["age"]))
        self.assertEqual(len(docs), 15)

    def test_sort_desc_complex_error(self):
        self.assertRefused(400, self.db.find, {"company": {"$lt": "M"},
                                               "$or": [{"company": "Dreamia"}, {"manager": True}]},
                           sort=[{"company": "desc"}], error="no_usable_index")

    def test_fields(self):
        docs = self.db.find({"age": {"$gt": 0}}, fields=["user_id", "location.address"])
        self.assertEqual(len(docs), 15)
        for d in docs:
            self.assertEqual(sorted(d), ["location", "user_id"])
            self.assertEqual(sorted(d["location"]), ["address"])

    def test_r(self):
        for r in [1, 2, 3]:
            with self.subTest(r=r):
                self.assertEqual(len(self.db.find({"age": {"$gt": 0}}, r=r)), 15)

    def test_empty(self):
        self.assertEqual(len(self.db.find({})), 15)

    def test_empty_subsel(self):
        self.assertEqual(self.db.find({"_id": {"$gt": None}, "location": {}}), [])

    def test_empty_subsel_match(self):
        self.db.save([{"user_id": "eo", "empty_obj": {}}])
        self.assertEqual(self.user_ids({"_id": {"$gt": None}, "empty_obj": {}}), ["eo"])

    def test_unsatisfiable_range(self):
        self.assertEqual(self.db.find({"$and": [{"age": {"$gt": 0}}, {"age": {"$lt": 0}}]}), [])

    def test_explain_view_args(self):
        explain = self.db.explain({"age": {"$gt": 0}}, fields=["manager"])
        args = explain["mrargs"]
        self.assertEqual((args["stable"], args["update"], args["reduce"]), (False, True, False))
        self.assertEqual((args["start_key"], args["end_key"]), ([0], ["<MAX>"]))
        self.assertEqual(args["include_docs"], True)

    def test_sort_with_all_docs(self):
        explain = self.db.explain({"_id": {"$gt": 0}, "age": {"$gt": 0}}, sort=["_id"])
        self.assertEqual(explain["index"]["type"], "special")
