"""18-json-sort: a sort served by an index whose earlier columns the selector fixes."""

from mango import FreshDatabaseTest

DOCS = [{"_id": str(n), "name": name, "age": 10 * n, "cars": cars}
        for n, name, cars in [(1, "Jimi", 1), (2, "Eddie", 1), (3, "Jane", 2), (4, "Mary", 2),
                              (5, "Sam", 3)]]


class JSONIndexSortOptimisations(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in DOCS])

    def explained(self, fields, selector, **options):
        self.db.index(fields, name="-".join(fields))
        return self.db.explain(selector, **options)

    def refused(self, fields, selector, **options):
        """`_find` refuses the sort; `_explain` (since CouchDB 3.4) answers why instead,
        with no index."""
        self.db.index(fields, name="-".join(fields))
        self.assertRefused(400, self.db.find, selector, error="no_usable_index", **options)
        self.assertIsNone(self.db.explain(selector, **options)["index"])

    def test_works_for_basic_case(self):
        explain = self.explained(["cars", "age"], {"cars": "2", "age": {"$gt": 10}}, sort=["age"])
        self.assertEqual(explain["index"]["name"], "cars-age")
        self.assertEqual(explain["mrargs"]["direction"], "fwd")

    def test_works_for_all_fields_specified(self):
        explain = self.explained(["cars", "age"], {"cars": "2", "age": {"$gt": 10}},
                                 sort=["cars", "age"])
        self.assertEqual(explain["index"]["name"], "cars-age")

    def test_works_for_no_sort_fields_specified(self):
        explain = self.explained(["cars", "age"], {"cars": {"$gt": 10}, "age": {"$gt": 10}})
        self.assertEqual(explain["index"]["name"], "cars-age")

    def test_works_for_opp_dir_sort(self):
        explain = self.explained(["cars", "age"], {"cars": "2", "age": {"$gt": 10}},
                                 sort=[{"age": "desc"}])
        self.assertEqual(explain["index"]["name"], "cars-age")
        self.assertEqual(explain["mrargs"]["direction"], "rev")

    def test_not_work_for_non_constant_field(self):
        self.refused(["cars", "age"], {"cars": {"$gt": 10}, "age": {"$gt": 10}}, sort=["age"])

    def test_three_index_one(self):
        explain = self.explained(["cars", "age", "name"],
                                 {"cars": "2", "age": 10, "name": {"$gt": "AA"}}, sort=["name"])
        self.assertEqual(explain["index"]["name"], "cars-age-name")

    def test_three_index_two(self):
        explain = self.explained(["cars", "age", "name"],
                                 {"cars": "2", "name": "Eddie", "age": {"$gt": 10}}, sort=["age"])
        self.assertEqual(explain["index"]["name"], "cars-age-name")

    def test_three_index_fails(self):
        self.refused(["cars", "age", "name"],
                     {"name": "Eddie", "age": {"$gt": 1}, "cars": {"$gt": "1"}}, sort=["name"])

    def test_empty_sort(self):
        explain = self.explained(["cars", "age", "name"],
                                 {"name": {"$gt": "Eddie"}, "age": 10, "cars": {"$gt": "1"}})
        self.assertEqual(explain["index"]["name"], "cars-age-name")

    def test_in_between(self):
        selector = {"name": "Eddie", "age": 10, "cars": {"$gt": "1"}}
        self.assertEqual(self.explained(["cars", "age", "name"], selector)["index"]["name"],
                         "cars-age-name")
        self.assertRefused(400, self.db.find, selector, sort=["cars", "name"],
                           error="no_usable_index")
        self.assertIsNone(self.db.explain(selector, sort=["cars", "name"])["index"])

    def test_ignore_after_set_sort_value(self):
        explain = self.explained(["cars", "age", "name"],
                                 {"age": {"$gt": 10}, "cars": 2, "name": {"$gt": "A"}}, sort=["age"])
        self.assertEqual(explain["index"]["name"], "cars-age-name")

    def test_not_use_index_if_other_fields_in_sort(self):
        self.refused(["cars", "age"], {"age": 10, "cars": {"$gt": "1"}}, sort=["cars", "name"])
