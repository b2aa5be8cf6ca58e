"""01-index-crud-test: creating, listing and deleting JSON indexes."""

from mango import FreshDatabaseTest


class IndexCrudTests(FreshDatabaseTest):
    def test_bad_fields(self):
        for fields in [None, True, False, "bing", 2.0, {"foo": "bar"}, [{"foo": 2}],
                       [{"foo": "asc", "bar": "desc"}], [{"foo": "asc"}, {"bar": "desc"}],
                       [""]]:
            with self.subTest(fields=fields):
                self.assertRefused(400, self.db.index, fields)

    def test_bad_types(self):
        for kind in [None, True, False, 1.5, "foo", "geo", {"foo": "bar"}, ["baz", 3.0]]:
            with self.subTest(kind=kind):
                self.assertRefused(400, self.db.index, ["foo"], kind=kind)

    def test_bad_names(self):
        for name in ["", True, False, 1.5, {"foo": "bar"}, [None, False]]:
            with self.subTest(name=name):
                self.assertRefused(400, self.db.index, ["foo"], name=name)

    def test_bad_ddocs(self):
        for ddoc in ["", True, False, 1.5, {"foo": "bar"}, [None, False]]:
            with self.subTest(ddoc=ddoc):
                self.assertRefused(400, self.db.index, ["foo"], ddoc=ddoc)

    def test_bad_url(self):
        self.assertRefused(405, self.db.request, "GET", "_index/foo")

    def listed(self, name):
        return [index for index in self.db.indexes() if index["name"] == name]

    def test_create_lists_fields_ascending(self):
        for fields, name in [(["foo", "bar"], "idx_01"), (["baz", "foo"], "idx_02")]:
            self.assertIs(self.db.index(fields, name=name), True)
            [index] = self.listed(name)
            self.assertEqual(index["def"]["fields"], [{field: "asc"} for field in fields])

    def test_create_twice_exists(self):
        self.assertIs(self.db.index(["foo", "bar"], name="idx_01"), True)
        self.assertIs(self.db.index(["foo", "bar"], name="idx_01"), False)

    def test_design_documents_behind_indexes(self):
        self.db.index(["foo", "bar"], name="idx_01")
        self.db.index(["hello", "bar"])
        for index in self.db.indexes():
            if index["type"] == "special":
                continue
            self.assertEqual(self.db.get(index["ddoc"])["_id"], index["ddoc"])
            info = self.db.request("GET", index["ddoc"] + "/_info")
            self.assertEqual(info["name"], index["ddoc"].split("_design/")[-1])

    def delete_and_compare(self, name, ddoc_as_given):
        before = self.db.indexes()
        self.assertIs(self.db.index(["bing"], name=name), True)
        [index] = self.listed(name)
        self.assertEqual(index["def"]["fields"], [{"bing": "asc"}])
        self.db.delete_index(ddoc_as_given(index["ddoc"]), index["name"])
        self.assertEqual(before, self.db.indexes())

    def test_delete_escaped(self):
        self.db.index(["foo", "bar"], name="idx_01")
        self.delete_and_compare("idx_del_1", lambda ddoc: ddoc.replace("/", "%2F"))

    def test_delete_unescaped(self):
        self.delete_and_compare("idx_del_2", lambda ddoc: ddoc)

    def test_delete_without_design_prefix(self):
        self.delete_and_compare("idx_del_3", lambda ddoc: ddoc.split("/")[-1])

    def test_bulk_delete(self):
        for n in (1, 2, 3):
            self.assertIs(self.db.index(["field%d" % n], name="idx_0%d" % n), True)
        ddocs = [index["ddoc"] for index in self.db.indexes() if index["ddoc"] is not None]
        ddocs.append("_design/this_is_not_an_index_name")
        answer = self.db.request("POST", "_index/_bulk_delete", {"docids": ddocs})
        self.assertEqual(answer["fail"][0]["id"], "_design/this_is_not_an_index_name")
        self.assertEqual(len(answer["success"]), 3)
        self.assertEqual([index["type"] for index in self.db.indexes()], ["special"])

    def test_recreate_after_delete(self):
        before = self.db.indexes()
        for _ in range(5):
            self.assertIs(self.db.index(["bing"], name="idx_recreate"), True)
            [index] = self.listed("idx_recreate")
            self.db.delete_index(index["ddoc"], index["name"])
            self.assertEqual(before, self.db.indexes())

    def test_delete_missing(self):
        self.assertRefused(404, self.db.delete_index, "this_is_not_a_design_doc_id", "foo")
        self.db.index(["fields"], name="idx_01")
        [index] = [i for i in self.db.indexes() if i["type"] != "special"]
        ddoc = index["ddoc"].split("/")[-1]
        self.assertRefused(404, self.db.delete_index, ddoc, "this_is_not_an_index_name")
        self.assertRefused(404, self.db.delete_index, ddoc, index["name"], kind="not_a_real_type")

    def test_limit_and_skip_of_the_listing(self):
        for n in range(1, 6):
            self.assertIs(self.db.index(["field%d" % n], name="idx_0%d" % n), True)
        for params, count in [({"limit": 2}, 2), ({"limit": 5, "skip": 4}, 2), ({"skip": 5}, 1),
                              ({"skip": 6}, 0), ({"skip": 100}, 0), ({"limit": 10000000}, 6)]:
            with self.subTest(params=params):
                self.assertEqual(len(self.db.indexes(**params)), count)
        # CouchDB's own answer to a negative skip or a zero limit is a 500.
        for params in [{"skip": -1}, {"limit": 0}]:
            with self.subTest(params=params):
                self.assertRefused(500, self.db.indexes, error="invalid_list_index_params", **params)

    def test_out_of_sync(self):
        self.db.save([{"_id": "1", "name": "Jimi", "age": 10, "cars": 1},
                      {"_id": "2", "name": "kate", "age": 8, "cars": 0}])
        self.db.index(["age"], name="age")
        # The design document CouchDB names an unnamed index of ["age"] by.
        ddoc = "_design/a017b603a47036005de93034ff689bbbb6a873c4"
        self.assertEqual(len(self.db.find({"age": {"$gt": 0}}, use_index=ddoc)), 2)
        self.db.delete("1")
        self.assertEqual(len(self.db.find({"age": {"$gt": 0}}, use_index=ddoc)), 1)


class IndexRequestTests(FreshDatabaseTest):
    """From 26-test_query (whose class CouchDB runs only with its search service): `_index`
    requires a JSON body's Content-Type."""

    def test_post_index_invalid_header(self):
        response = self.db.http.post(self.db.url + "/_index",
                                     data='{"index": {"fields": ["foobar"]}}',
                                     headers={"Content-Type": None})
        self.assertEqual(response.status_code, 415)
        self.assertEqual(response.json()["reason"], "Content-Type must be application/json")

    def test_bare_names_sort_ascending(self):
        # A bare field name is {"name": "asc"}: beside a descending one it mixes directions.
        self.assertRefused(400, self.db.index, [{"foo": "desc"}, "bar"],
                           error="unsupported_mixed_sort")
        self.assertIs(self.db.index([{"foo": "desc"}, {"bar": "desc"}], name="both_desc"), True)
