"""analyze --format html: the page in a real browser (Debian's chromium,
headless, driven over the DevTools protocol on a pipe: the standard library
only).

A training loop is recorded for real (prism regions, steps, one step in
nine slow, names that are markup: `<img src=x onerror=...>` and a closing
script tag), its report written by prism-top, then loaded from a file://
URL.  Checked: the page asks for nothing but itself (no request other than
the document) and logs no error or exception; it draws itself (its
`data-ready` mark); its figures are those of `analyze --format json` of
the same profile (steps, findings, operations by name, calls and order);
the hostile names are text, never markup (nothing they would run ran, and
they appear verbatim in the page's text); a real mouse click on a flame
graph frame zooms to it and the search box finds a name; Profile.save_html
writes the same page.  Without chromium
the test skips, saying so (the tests' dependency step installs it).
"""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import unittest

from pyutil import B, PRISM_TOP, clean_env, run_py, torch_skip

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">'
HOSTILE_SCRIPT = '</script><script>window.__pwned=2</script>'


def browser_env():
    """The browser's environment: no sanitizer runtime preloaded (a SANITIZE
    pass preloads it into the test's interpreter) and no PRISM session."""
    env = clean_env()
    for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "PRISM_TEST_SANITIZE"):
        env.pop(k, None)
    return env


class Browser:
    """chromium --headless with --remote-debugging-pipe: commands on its fd
    3, answers and events on its fd 4, each a JSON text ending in NUL."""

    def __init__(self, profile_dir):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():                      # (subprocess closes all but pass_fds after this)
            a, b = os.dup(to_r), os.dup(from_w)     # above 4, whatever the pipes' numbers
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.p = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--user-data-dir=" + profile_dir, "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=browser_env())
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False, wait=False)
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        os.close(self.to_w)
        os.close(self.from_r)

    def _read(self, deadline_s):
        r, _, _ = select.select([self.from_r], [], [], deadline_s)
        if not r:
            raise AssertionError("chromium said nothing for %d s" % deadline_s)
        chunk = os.read(self.from_r, 1 << 16)
        if not chunk:
            raise AssertionError("chromium closed its pipe")
        self.buf += chunk

    def _message(self):
        while b"\0" not in self.buf:
            self._read(120)
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method, params=None, session=True, wait=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        while True:
            m = self._message()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise AssertionError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._message()
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def js(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise AssertionError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                   "button": "left", "clickCount": 1})


class PageTest(unittest.TestCase):
    """A temporary directory (cls.dir) and, after make_page, the page open
    in a browser (cls.browser)."""
    prefix = "prism-html-"

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix=cls.prefix)
        cls.browser = None
        try:
            cls.make_page()
            cls.browser = Browser(os.path.join(cls.dir, "chromium"))
            cls.browser.open("file://" + cls.page)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.browser:
            cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def report(cls, *args):
        """prism-top ARGS: its stdout (JSON reports parsed)."""
        out = subprocess.run([PRISM_TOP] + list(args), check=True, capture_output=True,
                             timeout=300).stdout
        return json.loads(out) if "json" in args else out

    def quiet(self):
        """The page drew itself, asked for nothing but itself and logged no
        error."""
        b = self.browser
        self.assertEqual(b.js("document.body.getAttribute('data-ready')"), "1")
        urls = [m["params"]["request"]["url"] for m in b.events
                if m.get("method") == "Network.requestWillBeSent"]
        self.assertTrue(all(u == "file://" + self.page for u in urls), urls)
        errors = [m for m in b.events if m.get("method") == "Runtime.exceptionThrown" or
                  (m.get("method") == "Runtime.consoleAPICalled" and
                   m["params"]["type"] in ("error", "assert")) or
                  (m.get("method") == "Log.entryAdded" and
                   m["params"]["entry"]["level"] == "error")]
        self.assertEqual(errors, [])


RECORD = """
import prism
assert prism.init(output=%r)
for i in range(27):
    with prism.step():
        with prism.region("load_batch"):
            sum(range(20000))
        with prism.region("forward"):
            with prism.region(%r):
                sum(range(60000 if i %% 9 == 4 else 30000))
            with prism.region(%r):
                sum(range(10000))
        with prism.region("optimizer_step"):
            sum(range(5000))
prism.shutdown()
"""


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlReport(PageTest):
    @classmethod
    def make_page(cls):
        cls.profile = os.path.join(cls.dir, "run.cbor")
        run_py(RECORD % (cls.profile, HOSTILE_IMG, HOSTILE_SCRIPT))
        cls.page = os.path.join(cls.dir, "report.html")
        cls.report("analyze", "--format", "html", "-o", cls.page, cls.profile)
        cls.json = cls.report("analyze", "--format", "json", cls.profile)

    def test_self_contained_and_quiet(self):
        self.quiet()
        text = open(self.page, encoding="utf-8").read()
        for needle in ("src=\"", "href=", "url(", "@import", "<link", "<iframe"):
            self.assertNotIn(needle, text.split("<script type=")[0])

    def test_figures_are_the_reports(self):
        b, j = self.browser, self.json
        cards = b.js("Array.from(document.querySelectorAll('#summary .card')).map("
                     "c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent])")
        cards = dict(cards)
        self.assertEqual(cards["Steps"], str(j["steps"]["count"]))
        rows = b.js("Array.from(document.querySelectorAll('#ops tbody tr')).map("
                    "r => Array.from(r.cells).map(c => c.textContent))")
        want = [(o["name"], str(o["calls"])) for o in j["ops"][:30]]
        self.assertEqual([(r[1], r[3]) for r in rows], want)
        self.assertEqual(b.js("document.querySelectorAll('#bottlenecks .finding').length"),
                         len(j["bottlenecks"]))
        self.assertEqual(b.js("document.querySelectorAll('#steps polyline').length"), 1)
        self.assertEqual(b.js("JSON.parse(document.getElementById('prism-analyze').textContent)"
                              ".steps.count"), j["steps"]["count"])

    def test_hostile_names_are_text(self):
        b = self.browser
        self.assertIsNone(b.js("window.__pwned === undefined ? null : window.__pwned"))
        self.assertEqual(b.js("document.querySelectorAll('img, #app script').length"), 0)
        body = b.js("document.getElementById('app').textContent")
        self.assertIn(HOSTILE_IMG, body)
        self.assertIn(HOSTILE_SCRIPT, body)

    def test_profile_save_html_is_the_same_page(self):
        import prism
        out = os.path.join(self.dir, "saved.html")
        self.assertEqual(prism.load(self.profile).save_html(out), out)
        with open(out, "rb") as a, open(self.page, "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp-" in f], [])

    def test_flame_click_and_search(self):
        b = self.browser
        box = b.js("(() => { const f = Array.from(document.querySelectorAll('#flame-graph .fr'))"
                   ".find(e => e.textContent === 'forward'); const r = f.getBoundingClientRect();"
                   " f.scrollIntoView(); const s = f.getBoundingClientRect();"
                   " return [s.left + 2, s.top + s.height / 2]; })()")
        b.click(box[0], box[1])
        info = b.js("document.querySelector('#flame .finfo').textContent")
        self.assertTrue(info.startswith("forward"), info)
        top = b.js("Array.from(document.querySelectorAll('#flame-graph .fr'))"
                   ".filter(e => e.style.top === '0px').map(e => [e.textContent, e.style.width])")
        self.assertEqual(top, [["forward", "100%"]])
        b.js("(() => { const s = document.getElementById('flame-search'); s.focus(); })()")
        b.send("Input.insertText", {"text": "optimizer"})
        # zoomed into forward: the optimizer's frame is not below it
        self.assertTrue(b.js("document.querySelector('#flame .finfo').textContent")
                        .endswith("| 0 matches"))
        b.js("document.getElementById('flame-reset').click()")
        self.assertTrue(b.js("document.querySelector('#flame .finfo').textContent")
                        .endswith("| 1 match"))
        hits = b.js("Array.from(document.querySelectorAll('#flame-graph .fr.hit'))"
                    ".map(e => e.textContent)")
        self.assertEqual(hits, ["optimizer_step"])


NEW_RUN = """
import prism
assert prism.init(output=%r)
for i in range(27):
    with prism.step():
        with prism.region("load_batch"):
            sum(range(20000))
        with prism.region("forward"):
            with prism.region("layer1"):
                sum(range(90000))
            with prism.region("only_new"):
                sum(range(10000))
prism.shutdown()
"""


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlCompare(PageTest):
    """compare A B --format html: the changes are the JSON report's, the
    new run's flame graph says which paths are new, and the page is as
    quiet and self-contained as the analyze one."""

    prefix = "prism-htmlc-"

    @classmethod
    def make_page(cls):
        cls.base = os.path.join(cls.dir, "base.cbor")
        cls.new = os.path.join(cls.dir, "new.cbor")
        run_py(RECORD % (cls.base, "layer1", "layer2"))
        run_py(NEW_RUN % cls.new)
        cls.page = os.path.join(cls.dir, "compare.html")
        cls.report("compare", "--format", "html", "-o", cls.page, cls.base, cls.new)
        cls.json = cls.report("compare", "--format", "json", cls.base, cls.new)

    def test_compare_page(self):
        b, j = self.browser, self.json
        self.quiet()
        rows = b.js("Array.from(document.querySelectorAll('#regions tbody tr')).map("
                    "r => [r.cells[0].textContent, r.cells[1].textContent])")
        want = sorted(j["regions"], key=lambda r: -abs(r["delta_ns"]))[:60]
        self.assertEqual(sorted(map(tuple, rows)), sorted((r["path"], r["status"]) for r in want))
        new_frames = b.js("Array.from(document.querySelectorAll('#flame-graph .fr.fnew'))"
                          ".map(e => e.textContent)")
        self.assertEqual(new_frames, ["only_new"])
        steps = b.js("Array.from(document.querySelectorAll('#summary tbody tr'))"
                     ".find(r => r.cells[0].textContent === 'steps').cells[2].textContent")
        self.assertEqual(steps, str(j["new"]["steps"]))


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
@unittest.skipIf(torch_skip(), torch_skip() or "")
class HtmlOpWindow(PageTest):
    """A run with the operator window (python -m prism --op-steps 3 on
    tests/python/ops_train.py, which counts its own FLOPs): the page's
    Operator window section gives the steps, the FLOPs a step (the script's
    count) and the heaviest operators and FLOP regions of the JSON report."""

    prefix = "prism-htmlo-"

    @classmethod
    def make_page(cls):
        cls.profile = os.path.join(cls.dir, "ops.cbor")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops_train.py")
        p = subprocess.run([sys.executable, "-m", "prism", "-o", cls.profile, "--op-steps", "3",
                            "--op-warmup", "2", script, "6"], env=clean_env(),
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        line = [l for l in p.stdout.splitlines() if l.startswith("TRUTH ")][-1]
        cls.truth = json.loads(line[6:])
        cls.page = os.path.join(cls.dir, "report.html")
        cls.report("analyze", "--format", "html", "-o", cls.page, cls.profile)
        cls.json = cls.report("analyze", "--format", "json", cls.profile)

    def test_operator_window_section(self):
        b, w = self.browser, self.json["op_window"]
        self.quiet()
        self.assertEqual(b.js("document.querySelector('#opwindow h2').textContent"),
                         "Operator window: steps 2-4 (3 steps, left out of the step times)")
        line = b.js("document.querySelector('#opwindow .oline').textContent")
        self.assertTrue(line.startswith("FLOPs a step: %s MFLOP, mostly f32; achieved "
                                        % float("%.3g" % (self.truth["flops"] / 1e6))), line)
        self.assertNotIn("MFU", line)                # no GPU
        ops = b.js("Array.from(document.querySelectorAll('#opwindow table.opheavy tbody tr'))"
                   ".map(r => r.cells[0].textContent)")
        self.assertEqual(ops, [o["name"] for o in w["heaviest"]])
        self.assertTrue(all(o.startswith("aten::") for o in ops), ops)
        regions = b.js("Array.from(document.querySelectorAll('#opwindow table.opregions tbody "
                       "tr')).map(r => r.cells[0].textContent)")
        self.assertEqual(regions, [r["path"] for r in w["regions"]])


def job_page(cls, ranks):
    """A job of `ranks` processes that really ran (the multirank sample, rank
    1 slower), its page into cls.page; its JSON report."""
    job = os.path.join(cls.dir, "job")
    subprocess.run([os.path.join(B, "bin", "multirank"), "--ranks", str(ranks), "--steps", "20",
                    "--slow-rank", "1", "--output-dir", job], check=True, timeout=300,
                   env=clean_env(), capture_output=True)
    cls.page = os.path.join(cls.dir, "job.html")
    cls.report("analyze", "--format", "html", "-o", cls.page, job)
    return cls.report("analyze", "--format", "json", job)


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlJob(PageTest):
    """analyze DIR --format html of a job of 4 ranks that really ran (the
    multirank sample: processes meeting at a barrier every step, rank 1
    5 ms slower in forward): its ranks and straggler are the JSON report's,
    the heatmap's row of rank 1 is the one hovering names, and the toggle
    switches work and step time."""

    prefix = "prism-htmlj-"

    @classmethod
    def make_page(cls):
        cls.json = job_page(cls, 4)

    def test_job_page(self):
        b, j = self.browser, self.json
        self.quiet()
        ranks = b.js("Array.from(document.querySelectorAll('#ranks tbody tr'))"
                     ".map(r => [r.cells[0].textContent, r.cells[7].textContent])")
        self.assertEqual(ranks, [[str(r["rank"]), "yes" if r["straggler"] else ""]
                                 for r in j["ranks"]])
        titles = b.js("Array.from(document.querySelectorAll('#stragglers .ftitle'))"
                      ".map(e => e.textContent)")
        self.assertEqual([t.split(":")[0] for t in titles],
                         ["rank %d" % s["rank"] for s in j["stragglers"]])
        # hover the middle of rank 1's row (the second), in the tenth bin
        box = b.js("(() => { const c = document.getElementById('heatmap'); c.scrollIntoView();"
                   " const r = c.getBoundingClientRect();"
                   " return [r.left + r.width * 9.5 / 20, r.top + r.height * 1.5 / 4]; })()")
        b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
        tip = b.js("document.getElementById('heat-info').textContent")
        self.assertTrue(tip.startswith("rank 1, step 9"), tip)
        self.assertTrue(tip.endswith("of work"), tip)
        b.js("document.getElementById('heat-toggle').click()")
        b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1] + 1})
        self.assertTrue(b.js("document.getElementById('heat-info').textContent")
                        .endswith("a step"))


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlJobTwo(PageTest):
    """A job of 2 ranks, rank 1 slower: its heatmap cells are shaded against
    the median of the two (their mean), rank 0's are not (the page took the
    upper of the two middle values: the slower rank itself, so no cell of a
    2-rank job was ever shaded); its card says where the others wait."""

    prefix = "prism-htmlj2-"

    @classmethod
    def make_page(cls):
        job_page(cls, 2)

    def test_straggler_shaded(self):
        b = self.browser
        self.quiet()
        # the green channel of the middle of each row's cells (paler: higher)
        g = b.js("(() => { const c = document.getElementById('heatmap');"
                 " const x = c.getContext('2d'), h = c.height / 2, out = [];"
                 " for (let i = 0; i < 2; i++) {"
                 "  const d = x.getImageData(0, Math.floor(h * i + h / 2), c.width, 1).data;"
                 "  let s = 0, n = 0; for (let k = 0; k < d.length; k += 4)"
                 "   if (d[k + 3]) { s += d[k + 1]; n++; }"
                 "  out.push(n ? s / n : -1); }"
                 " return out; })()")
        self.assertGreater(g[0], 235, g)            # rank 0: at or under the median
        self.assertLess(g[1], g[0] - 20, g)         # rank 1: shaded
        # the card says what the straggler costs the others, as the text does
        card = b.js("document.getElementById('stragglers').textContent")
        self.assertIn("The other ranks wait for it: allreduce, ", card)
        self.assertIn("waiting for the slowest rank, not work", card)


FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "html")


def text_block(text, first, last=None):
    """The lines of a text report from the one starting with `first` to the
    next blank line (or to the first ending with `last`)."""
    lines = text.decode().splitlines()
    i = [k for k, l in enumerate(lines) if l.startswith(first)][0]
    j = next((k for k in range(i, len(lines)) if not lines[k].strip()), len(lines))
    if last is not None:
        j = next((k + 1 for k in range(i, j) if lines[k].endswith(last)), j)
    return lines[i:j]


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlSummaryLines(PageTest):
    """analyze --format html of a real profile with an evaluation pass
    outside the steps, DataLoader workers and folded modules
    (tests/fixtures/html): the page shows the text report's Summary lines,
    word for word, among them Steps cover, Outside steps, Workers and
    Modules folded."""

    prefix = "prism-htmls-"

    @classmethod
    def make_page(cls):
        cls.profile = os.path.join(cls.dir, "folded.cbor")
        shutil.copy(os.path.join(FIXTURES, "folded.cbor"), cls.profile)
        shutil.copytree(os.path.join(FIXTURES, "folded.cbor.workers"),
                        cls.profile + ".workers")
        cls.page = os.path.join(cls.dir, "report.html")
        cls.report("analyze", "--format", "html", "-o", cls.page, cls.profile)
        cls.text = cls.report("analyze", cls.profile)

    def test_summary_lines_are_the_texts(self):
        b = self.browser
        self.quiet()
        page = b.js("Array.from(document.querySelectorAll('#summary #summary-lines .tline'))"
                    ".map(e => e.textContent)")
        want = [l[2:] for l in text_block(self.text, "Summary:")[1:]]
        self.assertEqual(page, want)
        for start in ("Steps cover: ", "Outside steps: 'eval' ", "Sampled outside steps (",
                      "Stack samples: ", "Modules folded: 6 of 11 module regions",
                      "  folded: ", "Workers: 2 DataLoader workers (2 processes, 2 threads): ",
                      "CPU load (cores): ", "Memory leak: ", "System ("):
            self.assertTrue(any(l.startswith(start) for l in page), (start, page))
        # shown, not only in the DOM
        self.assertTrue(b.js("document.getElementById('summary-lines').offsetHeight > 100"))


@unittest.skipUnless(CHROMIUM, "no chromium here (the tests' dependency step installs it)")
class HtmlFoldedCompare(PageTest):
    """compare kept.cbor folded.cbor --format html (tests/fixtures/html: the
    same loop with every module kept, then with 6 folded): a row folded in
    one run reads 'folded' in p and n/a in med %, as in the text report,
    never '*'; the text's legend stands under the table; the whole-run lines
    and the raw % column are the text's; the flame graph stripes the folded
    paths instead of colouring them as changes."""

    prefix = "prism-htmlf-"

    @classmethod
    def make_page(cls):
        cls.base = os.path.join(FIXTURES, "kept.cbor")
        cls.new = os.path.join(FIXTURES, "folded.cbor")
        cls.page = os.path.join(cls.dir, "compare.html")
        cls.report("compare", "--format", "html", "-o", cls.page, cls.base, cls.new)
        cls.json = cls.report("compare", "--format", "json", cls.base, cls.new)
        cls.text = cls.report("compare", "--top", "0", cls.base, cls.new)

    def test_folded_rows_marked(self):
        b, j = self.browser, self.json
        self.quiet()
        head = b.js("Array.from(document.querySelectorAll('#regions thead th'))"
                    ".map(e => e.textContent)")
        rows = b.js("Array.from(document.querySelectorAll('#regions tbody tr')).map("
                    "r => [r.className].concat(Array.from(r.cells).map(c => c.textContent)))")
        col = {h: k + 1 for k, h in enumerate(head)}
        folded = {r["path"] for r in j["regions"] if r["folded_one"]}
        self.assertTrue(folded)
        shown = {r[1] for r in rows}
        self.assertTrue(folded & shown)
        for r in rows:
            if r[1] in folded:
                self.assertEqual((r[0], r[col["p"]], r[col["med %"]], r[col["*"]]),
                                 ("folded", "folded", "n/a", ""), r)
            else:
                self.assertNotEqual(r[col["p"]], "folded", r)
                self.assertEqual(r[0], "", r)
        # the text report's rows say the same
        for line in self.text.decode().splitlines():
            path = line[4:].split("  ")[0]
            if path in folded:
                self.assertTrue(line.endswith(" folded"), line)
                self.assertIn(" n/a ", line)
        # its legend, word for word (the text's lines joined)
        legend = " ".join(l.strip() for l in text_block(self.text, "  (p-value 'folded'", ")"))
        self.assertEqual("(" + b.js("document.getElementById('folded-legend').textContent")
                         + ")", legend)
        # the regions around a module kept in one run only hold PRISM's
        # hooks on it there alone: marked 'h' as in the text, with its legend
        hooked = {r["path"] for r in j["regions"] if r["hook_ns"]}
        self.assertIn("Net.forward", hooked)
        for r in rows:
            self.assertEqual(r[col["*"]].startswith("h"), r[1] in hooked, r)
        for line in self.text.decode().splitlines():
            path = line[4:].split("  ")[0]
            if path in hooked:
                self.assertEqual(line[1], "h", line)
        legend = " ".join(l.strip() for l in text_block(self.text, "  (med % and p-value", ")"))
        self.assertEqual(b.js("document.getElementById('hooks-legend').textContent"), legend)

    def test_run_lines_and_raw_column(self):
        b, j = self.browser, self.json
        text = []
        for l in text_block(self.text, "Whole run:"):
            if l.startswith(" ") and text:
                text[-1] += " " + l.strip()
            else:
                text.append(l)
        page = b.js("Array.from(document.querySelectorAll('#run-lines .tline'))"
                    ".map(e => e.textContent)")
        self.assertEqual(page, text)
        head = b.js("Array.from(document.querySelectorAll('#regions thead th'))"
                    ".map(e => e.textContent)")
        self.assertEqual("raw %" in head, j["run"]["whole_run_shift"])

    def test_flame_stripes_folded_paths(self):
        b, j = self.browser, self.json
        names = {r["name"] for r in j["regions"] if r["folded_one"]}
        frames = b.js("Array.from(document.querySelectorAll('#flame-graph .fr.ffold'))"
                      ".map(e => [e.textContent, e.className])")
        self.assertTrue(frames)
        for name, cls in frames:
            self.assertIn(name, names)
            for colour in ("fslow", "ffast", "fsame", "fnew"):
                self.assertNotIn(colour, cls.split())


if __name__ == "__main__":
    unittest.main()
