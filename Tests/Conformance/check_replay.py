"""Checks a wirediff replay of the conformance recording against the requests known to
answer as CouchDB 3.5 did (reason texts aside).

usage: check_replay.py RESULTS.json ANSWERING.txt [--update]

Fails (exit 1) when a request listed in ANSWERING.txt no longer answers as CouchDB did;
reports those that newly do. With --update, rewrites ANSWERING.txt to the current set.
"""
import json
import sys


def answers_as_couchdb(result):
    """identical, or differing only in a reason text (clients branch on `error`)"""
    if result['identical']:
        return True
    return bool(result.get('kinds')) and set(result['kinds']) == {'reason_text'}


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        data = json.load(f)
    compared = [r for r in data['results'] if r['phase'] in ('read', 'write')]
    now = {r['n'] for r in compared if answers_as_couchdb(r)}
    documented = {r['n'] for r in compared if r['n'] not in now and r.get('all_documented')}
    with open(argv[2]) as f:
        known = {int(line.split()[0]) for line in f if line.strip() and not line.startswith('#')}
    total = len(compared)
    print('conformance replay: %d of %d requests answer as CouchDB 3.5 did (%.1f%%), '
          '%d more differ only in ways docs/server.md names, %d differ otherwise'
          % (len(now), total, 100.0 * len(now) / total, len(documented),
             total - len(now) - len(documented)))
    by_n = {r['n']: r for r in compared}
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
