"""Checks a wirediff replay of the conformance recording against the requests known to
answer as CouchDB 3.5 did (reason texts aside).

usage: check_replay.py RESULTS.json ANSWERING.txt [--update]

Fails (exit 1) when a request listed in ANSWERING.txt no longer answers as CouchDB did, or
when a request differs in a way no document names; reports those that newly answer as
CouchDB did. With --update, rewrites ANSWERING.txt to the current set.
"""
import json
import sys


def answers_as_couchdb(result):
    """identical, or differing only in a reason text (clients branch on `error`)"""
    if result['identical']:
        return True
    return bool(result.get('kinds')) and set(result['kinds']) == {'reason_text'}


def zero_rewritten(diff):
    """CouchDB rewrites -0.0 and the smallest doubles (5e-324) as 0.0; Settee gives them
    back as written (docs/server.md, "Differs on purpose")."""
    couch, settee = diff.get('couch'), diff.get('settee')
    return (diff['kind'] == 'value' and isinstance(couch, float) and couch == 0.0
            and isinstance(settee, float) and abs(settee) < 1e-300
            and (settee != 0.0 or str(settee) == '-0.0'))


def couchdb_crash(result):
    """CouchDB 3.5 crashed (500 unknown_error); Settee answers the request instead
    (docs/server.md names each case)."""
    return any(d['kind'] == 'status' and d.get('couch') == 500 for d in result.get('diffs') or []) \
        and any(d['kind'] == 'error_name' and d.get('couch') == 'unknown_error'
                for d in result.get('diffs') or [])


def only_documented(result):
    """every difference is one docs/server.md or docs/query-language.md names"""
    if result.get('all_documented') or couchdb_crash(result):
        return True
    diffs = result.get('diffs') or []
    return bool(diffs) and all(
        d.get('documented') or d['kind'] == 'reason_text' or zero_rewritten(d) for d in diffs)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        data = json.load(f)
    compared = [r for r in data['results'] if r['phase'] in ('read', 'write')]
    now = {r['n'] for r in compared if answers_as_couchdb(r)}
    documented = {r['n'] for r in compared if r['n'] not in now and only_documented(r)}
    with open(argv[2]) as f:
        known = {int(line.split()[0]) for line in f if line.strip() and not line.startswith('#')}
    total = len(compared)
    print('conformance replay: %d of %d requests answer as CouchDB 3.5 did (%.1f%%), '
          '%d more differ only in ways docs/server.md names, %d differ otherwise'
          % (len(now), total, 100.0 * len(now) / total, len(documented),
             total - len(now) - len(documented)))
    by_n = {r['n']: r for r in compared}
    otherwise = sorted(r['n'] for r in compared if r['n'] not in now and r['n'] not in documented)
    if otherwise:
        print('differing otherwise: %s' % ' '.join('#%d' % n for n in otherwise))
    lost = sorted(known - now)
    gained = sorted(now - known)
    if '--update' in argv:
        with open(argv[2], 'w') as f:
            f.write('# Requests of recording-1.json that answer as CouchDB 3.5 did (reason texts\n'
                    '# aside): n, endpoint. CI fails when one of them stops doing so.\n')
            for n in sorted(now):
                f.write('%d %s\n' % (n, by_n[n]['endpoint']))
        print('wrote %d requests to %s' % (len(now), argv[2]))
        return 0
    if gained:
        print('%d requests newly answer as CouchDB did (add them: --update): %s'
              % (len(gained), ' '.join('#%d' % n for n in gained[:40])))
    if otherwise and '--update' not in argv:
        print('%d requests differ in ways no document names: name them in docs/server.md '
              '(and here) or fix them' % len(otherwise))
        return 1
    if lost:
        print('%d requests no longer answer as CouchDB did:' % len(lost))
        for n in lost:
            r = by_n[n]
            print('  #%d %s %s%s' % (n, r['method'], r['path'], '?' + r['query'] if r['query'] else ''))
            for d in (r.get('diffs') or [])[:4]:
                print('      %s %s  couch: %s  |  settee: %s' % (
                    d['kind'], d['path'], json.dumps(d.get('couch'))[:120], json.dumps(d.get('settee'))[:120]))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
