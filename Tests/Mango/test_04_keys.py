"""04-key-tests: member names with dots, dollars and private-use characters, through a
JSON index. (CouchDB runs the selector-side cases against text indexes only.)"""

from mango import DatabaseTest

DOCS = [
    {"type": "complex_key", "title": "normal key"},
    {"type": "complex_key", "title": "key with dot", "dot.key": "dot's value",
     "none": {"dot": "none dot's value"}, "name.first": "Kvothe"},
    {"type": "complex_key", "title": "key with peso", "$key": "peso",
     "deep": {"$key": "deep peso"}, "name": {"first": "Master Elodin"}},
    {"type": "complex_key", "title": "unicode key", "\uf8ff": "apple"},
    {"title": "internal_fields_format", "utf8-1[]:string": "string",
     "utf8-2[]:boolean[]": True, "utf8-3[]:number": 9, "utf8-3[]:null": None},
]


class KeyTests(DatabaseTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db.save([dict(doc) for doc in DOCS])
        cls.db.index(["type"], ddoc="view")

    def by_title(self, fields):
        docs = self.db.find({"type": "complex_key"}, fields=fields, use_index="view")
        self.assertEqual(len(docs), 4)
        return {doc["title"]: doc for doc in docs}

    def test_dot_key(self):
        doc = self.by_title(["title", "dot\\.key", "none.dot"])["key with dot"]
        self.assertEqual(doc, {"title": "key with dot", "dot.key": "dot's value",
                               "none": {"dot": "none dot's value"}})

    def test_peso_key(self):
        doc = self.by_title(["title", "$key", "deep.$key"])["key with peso"]
        self.assertEqual(doc, {"title": "key with peso", "$key": "peso",
                               "deep": {"$key": "deep peso"}})

    def test_unicode_in_fieldname(self):
        doc = self.by_title(["title", "\uf8ff"])["unicode key"]
        self.assertEqual(doc["\uf8ff"], "apple")

    def test_unicode_in_selector_field(self):
        docs = self.db.find({"\uf8ff": "apple"})
        self.assertEqual([d["title"] for d in docs], ["unicode key"])

    def test_internal_field_names(self):
        for selector in [{"utf8-1[]:string": "string"}, {"utf8-2[]:boolean[]": True},
                         {"utf8-3[]:number": 9}, {"utf8-3[]:null": None}]:
            with self.subTest(selector=selector):
                docs = self.db.find(selector)
                self.assertEqual([d["title"] for d in docs], ["internal_fields_format"])

    def test_escape_period(self):
        self.assertEqual([d["title"] for d in self.db.find({"name\\.first": "Kvothe"})],
                         ["key with dot"])
        self.assertEqual(self.db.find({"name.first": "Kvothe"}), [])

    def test_object_period(self):
        self.assertEqual([d["title"] for d in self.db.find({"name.first": "Master Elodin"})],
                         ["key with peso"])
        self.assertEqual(self.db.find({"name\\.first": "Master Elodin"}), [])
