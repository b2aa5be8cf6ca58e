"""14-json-pagination-test: bookmarks through `_all_docs` and JSON indexes, both ways."""

from mango import FreshDatabaseTest

DOCS = [
    {"_id": "%d00" % n, "name": name, "location": location, "user_id": n, "same": "value"}
    for n, name, location in [(1, "Jimi", "AUS"), (2, "Eddie", "BRA"), (3, "Harry", "CAN"),
                              (4, "Eddie", "DEN"), (5, "Jones", "ETH"), (6, "Winnifried", "FRA"),
                              (7, "Marilyn", "GHA"), (8, "Sandra", "ZAR")]
]


class PaginateJsonDocs(FreshDatabaseTest):
    def setUp(self):
        super().setUp()
        self.db.save([dict(doc) for doc in DOCS])

    def pages(self, selector, sizes, firsts, **options):
        """Follows the bookmarks page by page: each page's size and first id as given,
        then an empty page."""
        bookmark = None
        for size, first in zip(sizes + [0], firsts + [None]):
            if bookmark is not None:
                options["bookmark"] = bookmark
            answer = self.db.find_raw(selector, fields=["_id"], **options)
            docs = answer["docs"]
            self.assertEqual(len(docs), size, answer)
            if first is not None:
                self.assertEqual(docs[0]["_id"], first)
            bookmark = answer["bookmark"]
            options.pop("skip", None)
        return bookmark

    def test_all_docs_paginate_to_end(self):
        self.pages({"_id": {"$gt": 0}}, [5, 3], ["100", "600"], limit=5)

    def test_return_previous_bookmark_for_empty(self):
        selector = {"_id": {"$gt": 0}}
        first = self.db.find_raw(selector, fields=["_id"])
        self.assertEqual(len(first["docs"]), 8)
        second = self.db.find_raw(selector, fields=["_id"], bookmark=first["bookmark"])
        self.assertEqual(second["docs"], [])
        third = self.db.find_raw(selector, fields=["_id"], bookmark=second["bookmark"])
        self.assertEqual(third["docs"], [])
        self.assertEqual(third["bookmark"], second["bookmark"])

    def test_all_docs_with_skip(self):
        self.pages({"_id": {"$gt": 0}}, [5, 1], ["300", "800"], skip=2, limit=5)

    def test_all_docs_reverse(self):
        self.pages({"_id": {"$gt": 0}}, [5, 3], ["800", "300"], sort=[{"_id": "desc"}], limit=5)

    def test_bad_bookmark(self):
        body = self.assertRefused(400, self.db.find, {"_id": {"$gt": 0}}, bookmark="bad-bookmark",
                                  error="invalid_bookmark")
        self.assertEqual(body["reason"], 'Invalid bookmark value: "bad-bookmark"')

    def test_throws_error_on_text_bookmark(self):
        # A text index's bookmark, which a JSON index cannot continue from.
        bookmark = "g2wAAAABaANkABFub2RlMUBjb3VjaGRiLm5ldGwAAAACYQBiP____2poAkY_8AAAAAAAAGEHag"
        self.assertRefused(400, self.db.find, {"_id": {"$gt": 0}}, bookmark=bookmark,
                           error="invalid_bookmark")

    def test_index_pagination(self):
        self.db.index(["location"])
        self.pages({"location": {"$gt": "A"}}, [5, 3], ["100", "600"], limit=5)

    def test_index_pagination_two_keys(self):
        self.db.index(["location", "user_id"])
        self.pages({"location": {"$gt": "A"}, "user_id": {"$gte": 1}}, [5, 3], ["100", "600"],
                   limit=5)

    def test_index_pagination_reverse(self):
        self.db.index(["location", "user_id"])
        self.pages({"location": {"$gt": "A"}, "user_id": {"$gte": 1}}, [5, 3], ["800", "300"],
                   sort=[{"location": "desc"}, {"user_id": "desc"}], limit=5)

    def test_index_pagination_same_emitted_key(self):
        # Every row has the same key: the bookmark goes on by document id.
        self.db.index(["same"])
        self.pages({"same": {"$gt": ""}}, [5, 3], ["100", "600"], limit=5)
