"""15-execution-stats-test: `execution_stats` counts what the query read."""

from mango import UserDocs


class ExecutionStatsTests(UserDocs):
    def stats(self, **options):
        answer = self.db.find_raw({"age": {"$lt": 35}}, **options)
        return answer, answer.get("execution_stats")

    def check_three(self, **options):
        answer, stats = self.stats(stats=True, **options)
        self.assertEqual(len(answer["docs"]), 3)
        # CouchDB 3.5 counts the index rows read, as the documents read.
        self.assertEqual(stats["total_keys_examined"], 3)
        self.assertEqual(stats["total_docs_examined"], 3)
        self.assertEqual(stats["total_quorum_docs_examined"], 0)
        self.assertEqual(stats["results_returned"], 3)
        self.assertGreater(stats["execution_time_ms"], 0)

    def test_simple_json_index(self):
        self.check_three()

    def test_no_execution_stats(self):
        answer, stats = self.stats(stats=False)
        self.assertIsNone(stats)
        self.assertNotIn("execution_stats", answer)

    def test_quorum_json_index(self):
        self.check_three(r=3)

    def test_results_returned_limit(self):
        answer, stats = self.stats(stats=True, limit=2)
        self.assertEqual(stats["results_returned"], len(answer["docs"]))
        self.assertEqual(len(answer["docs"]), 2)
