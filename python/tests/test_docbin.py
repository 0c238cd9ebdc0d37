"""The docbin Python package against independent references: Doxa's conformance vectors, docbin-run's
and docbin-eval's output for the same files, counts and formulas computed here with numpy, and
contiguous copies of strided arrays. Bad arrays and arguments must raise the documented exception,
never crash. Run by run_pytest.py (meson test python), which names the tools and the data.
"""
import json
import os
import subprocess
import tempfile
import threading

import numpy as np
import pytest

import docbin

RUN = os.environ.get('DOCBIN_TEST_RUN', 'docbin-run')
EVAL = os.environ.get('DOCBIN_TEST_EVAL', 'docbin-eval')
DATA = os.environ.get('DOCBIN_TEST_DATA', '')
DOXA = os.path.join(DATA, 'doxa-page')
ALGOS = ['otsu', 'niblack', 'sauvola', 'nick', 'wolf', 'hbk', 'howe', 'howe-auto', 'howe-predict', 'dbs']


# ---- PNM files, read and written here rather than by docbin -------------------------------------

def read_pnm(path):
    """A P4 (bit 1 = ink, returned as 0), P5 or P6 file as a uint8 array, (H, W) or (H, W, 3)."""
    data = open(path, 'rb').read()
    fields, pos = [], 0
    while len(fields) < (3 if data[:2] == b'P4' else 4):
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            pos = data.index(b'\n', pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    kind, w, h = fields[0], int(fields[1]), int(fields[2])
    body = np.frombuffer(data, np.uint8, offset=pos + 1)
    if kind == b'P4':
        bits = np.unpackbits(body[:(w + 7) // 8 * h].reshape(h, (w + 7) // 8), axis=1)[:, :w]
        return np.where(bits == 1, 0, 255).astype(np.uint8)
    assert fields[3] == b'255', path
    channels = 3 if kind == b'P6' else 1
    return body[:w * h * channels].reshape((h, w, 3) if channels == 3 else (h, w)).copy()


def write_pnm(path, a):
    kind = b'P6' if a.ndim == 3 else b'P5'
    with open(path, 'wb') as f:
        f.write(b'%s\n%d %d\n255\n' % (kind, a.shape[1], a.shape[0]) + np.ascontiguousarray(a).tobytes())
    return path


def page(h=67, w=91, seed=3, rgb=True):
    """A small document-like page: dark strokes on uneven, tinted paper with noise."""
    rnd = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    paper = 190 + 40 * x / w - 30 * y / h
    ink = ((y % 13 < 3) & ((x // 7) % 3 != 0)) | ((x % 19 < 2) & (y % 30 < 22))
    v = np.where(ink, 55.0, paper) + rnd.integers(-25, 26, (h, w))
    gray = np.clip(v, 0, 255).astype(np.uint8)
    if not rgb:
        return gray
    return np.stack([gray, np.clip(v - 15, 0, 255), np.clip(v - 45, 0, 255)], axis=2).astype(np.uint8)


def docbin_run(image, algo, args=()):
    """docbin-run's 8-bit output for `image`, written to and read from PNM files."""
    with tempfile.TemporaryDirectory() as tmp:
        src = write_pnm(os.path.join(tmp, 'in.ppm' if image.ndim == 3 else 'in.pgm'), image)
        out = os.path.join(tmp, 'out.pgm')
        subprocess.run([RUN, '--algo', algo, *args, src, '-o', out], check=True, capture_output=True)
        return read_pnm(out)


@pytest.fixture(scope='module')
def ctx():
    with docbin.Context() as c:
        yield c


# ---- conformance and agreement with the tools ---------------------------------------------------

@pytest.mark.skipif(not os.path.isdir(DOXA), reason=f'{DOXA} not found (the conformance data, -Ddata_dir)')
@pytest.mark.parametrize('algo,file,window,k', [
    ('sauvola', 'Sauvola', 27, 0.10), ('niblack', 'Niblack', 223, -0.61), ('wolf', 'Wolf', 21, 0.18),
    ('nick', 'NICK', 45, -0.10), ('otsu', 'Otsu', None, None)])
def test_doxa_conformance(ctx, algo, file, window, k):
    rgb = read_pnm(os.path.join(DOXA, '2JohnC1V3.ppm'))
    expect = read_pnm(os.path.join(DOXA, f'2JohnC1V3-{file}.pbm'))
    params = {} if window is None else {'window': window, 'k': k}
    for map_ in (None, 'cpu', 'gpu'):
        out = ctx.binarize(rgb, algo, gray='qt', map=map_, **params)
        assert out.shape == expect.shape
        assert int(np.count_nonzero(out != expect)) == 0, f'{algo} map {map_}'


@pytest.mark.parametrize('algo', ALGOS)
def test_same_as_docbin_run(ctx, algo):
    for image in (page(), page(seed=5, rgb=False)):
        assert np.array_equal(ctx.binarize(image, algo), docbin_run(image, algo)), algo
    params = {'otsu': {}, 'hbk': {'block': 8}, 'howe': {'c': 90, 'thi': 0.5}, 'howe-auto': {'search': 'c'},
              'howe-predict': {'c': 120}, 'dbs': {'seed': 7}}.get(
        algo, {'window': 15, 'k': 0.3})
    args = [a for n, v in params.items() for a in ('--param', f'{n}={v}')]
    image = page(seed=9)
    assert np.array_equal(ctx.binarize(image, algo, **params), docbin_run(image, algo, args)), algo


def test_evaluate_against_docbin_eval_and_numpy():
    gt, res = page(seed=2, rgb=False) >= 128, page(seed=4, rgb=False) >= 205
    gt8, res8 = np.where(gt, 255, 0).astype(np.uint8), np.where(res, 255, 0).astype(np.uint8)
    m = docbin.evaluate(gt8, res8)
    assert m == docbin.evaluate(gt, res)  # bool: ink False, as the uint8 image cast to bool
    tp = int(np.sum(~gt & ~res))
    fp, fn = int(np.sum(gt & ~res)), int(np.sum(~gt & res))
    assert (m['tp'], m['fp'], m['fn'], m['tn']) == (tp, fp, fn, gt.size - tp - fp - fn)
    p, r = 100 * tp / (tp + fp), 100 * tp / (tp + fn)
    assert m['fmeasure'] == pytest.approx(2 * p * r / (p + r), rel=1e-12)
    assert m['psnr'] == pytest.approx(10 * np.log10(gt.size / (fp + fn)), rel=1e-12)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = write_pnm(os.path.join(tmp, 'gt.pgm'), gt8), write_pnm(os.path.join(tmp, 'bin.pgm'), res8)
        cli = json.loads(subprocess.run([EVAL, '--json', a, b], check=True, capture_output=True).stdout)
    for key, value in m.items():
        assert cli[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key
    assert np.isnan(docbin.evaluate(gt, res, pseudo=False)['pseudo_fmeasure'])


# ---- arrays of any layout ------------------------------------------------------------------------

def test_strided_arrays(ctx):
    base = page(h=80, w=120, seed=11)
    rgba = np.concatenate([base, np.full(base.shape[:2] + (1,), 255, np.uint8)], axis=2)
    padded = np.zeros((90, 140, 3), np.uint8)
    padded[5:85, 7:127] = base
    views = {
        'every other row and column': base[::2, ::3],
        'mirrored (negative strides)': base[::-1, ::-1],
        'rgb of rgba': rgba[..., :3],
        'fortran order': np.asfortranarray(base),
        'region of a padded buffer': padded[5:85, 7:127],
        'bgr as rgb': base[..., ::-1],
        'gray column slice': base[:, 10:70, 1],
        'transposed gray': base[..., 0].T,
        'one-channel 3-d': base[..., :1],
    }
    for name, view in views.items():
        want = ctx.binarize(np.ascontiguousarray(view), 'sauvola', window=11)
        assert np.array_equal(ctx.binarize(view, 'sauvola', window=11), want), name


def test_out_dtype_and_times(ctx):
    image = page()
    ref = ctx.binarize(image, 'wolf')
    out = np.full(image.shape[:2], 7, np.uint8)
    assert ctx.binarize(image, 'wolf', out=out) is out and np.array_equal(out, ref)
    as_bool = ctx.binarize(image, 'wolf', dtype=bool)
    assert as_bool.dtype == np.bool_ and np.array_equal(as_bool, ref.astype(bool))
    res, times = ctx.binarize(image, 'howe', map='cpu,gpu,cpu', times=True)
    assert np.array_equal(res, ctx.binarize(image, 'howe'))
    assert times['map'] == 'cpu,gpu,cpu' and times['chosen_by'] == 'given'
    assert [s['stage'] for s in times['stages']] == [s for s, _ in docbin.algorithms()['howe']['stages']]
    assert [s['role'] for s in times['stages']] == ['cpu', 'gpu', 'cpu']
    assert all(s['ms'] >= 0 for s in times['stages']) and times['wall_ms'] > 0


def test_measure_then_auto_takes_the_wisdom(ctx, monkeypatch, tmp_path):
    monkeypatch.setenv('DOCBIN_WISDOM', str(tmp_path / 'wisdom'))
    image = page(seed=8)
    measured, t = ctx.binarize(image, 'otsu', map='measure', times=True)
    assert t['chosen_by'] == 'measure' and (tmp_path / 'wisdom').exists()
    auto, t2 = ctx.binarize(image, 'otsu', times=True)
    assert t2['chosen_by'] == 'wisdom' and t2['map'] == t['map']
    assert np.array_equal(measured, auto) and np.array_equal(auto, ctx.binarize(image, 'otsu', map='cpu'))


def test_module_level_and_descriptions(ctx):
    image = page(seed=6)
    assert np.array_equal(docbin.binarize(image, 'howe'), ctx.binarize(image, 'howe'))
    algos = docbin.algorithms()
    assert list(algos) == ALGOS
    sauvola = algos['sauvola']['params']
    assert sauvola['window']['default'] == 75 and sauvola['window']['kind'] == 'odd int'
    assert sauvola['k']['default'] == 0.2 and algos['hbk']['params']['block']['choices'] == [8, 16, 32]
    assert algos['howe']['params']['relabel']['kind'] == 'word'
    devices = docbin.devices()
    assert devices and all({'spec', 'name', 'type', 'roles'} <= set(d) for d in devices)
    assert any('cpu' in d['roles'] for d in devices)
    assert isinstance(docbin.__version__, str) and docbin.__version__.count('.') == 2


def test_batch_of_files(ctx):
    with tempfile.TemporaryDirectory() as tmp:
        pages = [page(seed=s) for s in (1, 2)]
        inputs = [write_pnm(os.path.join(tmp, f'p{i}.ppm'), p) for i, p in enumerate(pages)]
        out_dir = os.path.join(tmp, 'out')
        ctx.binarize_files(inputs, out_dir, 'sauvola', format='pgm', window=21)
        for i, p in enumerate(pages):
            assert np.array_equal(read_pnm(os.path.join(out_dir, f'p{i}.pgm')), ctx.binarize(p, 'sauvola', window=21))
        bad = os.path.join(tmp, 'bad.ppm')
        open(bad, 'wb').write(b'P6\n5 5\n255\nshort')
        with pytest.raises(ValueError, match='1 of 3 pages failed'):
            ctx.binarize_files(inputs + [bad], os.path.join(tmp, 'out2'), 'otsu')
        assert sorted(os.listdir(os.path.join(tmp, 'out2'))) == ['p0.png', 'p1.png']


# ---- bad input: exceptions, never a crash ---------------------------------------------------------

@pytest.mark.parametrize('image,error', [
    (np.zeros((10, 10), np.float64), TypeError),
    (np.zeros((10, 10), np.int16), TypeError),
    (np.zeros((10, 10), bool), TypeError),
    (np.zeros((10, 10, 4), np.uint8), ValueError),
    (np.zeros((10, 10, 2), np.uint8), ValueError),
    (np.zeros((0, 10), np.uint8), ValueError),
    (np.zeros((10, 0, 3), np.uint8), ValueError),
    (np.zeros((0, 0), np.uint8), ValueError),
    (np.zeros(10, np.uint8), ValueError),
    (np.zeros((2, 3, 4, 3), np.uint8), ValueError),
    (np.uint8(5), ValueError),
    ([[1, 2], [3, 4]], TypeError),
])
def test_bad_arrays(ctx, image, error):
    with pytest.raises(error):
        ctx.binarize(image, 'otsu')


@pytest.mark.parametrize('args,kwargs,match', [
    (('nope',), {}, 'unknown algorithm'),
    (('sauvola',), {'window': 4}, 'odd'),
    (('sauvola',), {'window': 1}, 'out of range'),
    (('sauvola',), {'k': 'abc'}, 'number'),
    (('sauvola',), {'q': 1}, 'no setting'),
    (('sauvola',), {'variant': 'fast'}, 'variant'),
    (('sauvola',), {'gray': 'luma'}, 'bt601'),
    (('hbk',), {'block': 12}, '8, 16, 32'),
    (('howe',), {'relabel': 'sometimes'}, 'exponential'),
    (('sauvola',), {'map': 'gpu,cpu'}, 'stages'),
    (('sauvola',), {'map': 'fastest'}, ''),
    (('sauvola',), {'out': np.zeros((3, 3), np.uint8)}, 'shape'),
])
def test_bad_arguments(ctx, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ctx.binarize(page(), *args, **kwargs)


def test_bad_types_and_evaluation(ctx):
    with pytest.raises(TypeError):
        ctx.binarize(page(), 'sauvola', k=True)
    with pytest.raises(TypeError):
        ctx.binarize(page(), 'sauvola', k=[0.2])
    with pytest.raises(TypeError):
        ctx.binarize(page(), 'sauvola', dtype=np.float32)
    with pytest.raises(ValueError, match='binary'):
        docbin.evaluate(page(rgb=False), page(rgb=False))
    with pytest.raises(ValueError, match='size'):
        docbin.evaluate(np.zeros((4, 4), np.uint8), np.zeros((4, 5), np.uint8))
    with pytest.raises(ValueError):
        docbin.evaluate(page(), page())
    with pytest.raises(docbin.DeviceError, match='no-such-device'):
        docbin.Context(gpu_device='no-such-device')
    closed = docbin.Context()
    closed.close()
    with pytest.raises(ValueError, match='closed'):
        closed.binarize(page(), 'otsu')


def test_no_gpu_auto_runs_on_cpu_and_gpu_fails_loudly(monkeypatch):
    """Without a bound GPU, the default map (auto) runs on the CPU; an explicit gpu map is refused."""
    monkeypatch.setenv('DOCBIN_GPU_DEVICE', '')
    with docbin.Context() as c:
        if any('gpu' in d['roles'] for d in c.devices()):
            pytest.skip('this machine has a GPU: the gpu role is bound by default')
        image = page()
        res, times = c.binarize(image, 'sauvola', times=True)
        assert times['map'] == 'cpu,cpu,cpu'
        assert np.array_equal(res, c.binarize(image, 'sauvola', map='cpu'))
        with pytest.raises(docbin.DeviceError, match='DOCBIN_GPU_DEVICE'):
            c.binarize(image, 'sauvola', map='gpu')


# ---- threads --------------------------------------------------------------------------------------

def test_context_shared_by_four_threads(ctx):
    jobs = [(page(seed=s, rgb=s % 2 == 0), algo, params) for s, (algo, params) in enumerate([
        ('sauvola', {'window': 15}), ('howe', {}), ('otsu', {}), ('nick', {'k': -0.1}),
        ('wolf', {'map': 'cpu'}), ('hbk', {'block': 8}), ('niblack', {'map': 'gpu,cpu,gpu', 'k': -0.3}),
        ('dbs', {'seed': 3})])]
    expect = [ctx.binarize(image, algo, **params) for image, algo, params in jobs]
    errors, results = [], {}

    def worker(t):
        try:
            for rep in range(3):
                for j in range(len(jobs)):
                    k = (j + 3 * t + rep) % len(jobs)
                    image, algo, params = jobs[k]
                    results[(t, rep, k)] = ctx.binarize(image, algo, **params)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4 * 3 * len(jobs)
    for (t, rep, k), res in results.items():
        assert np.array_equal(res, expect[k]), f'thread {t} run {rep}: {jobs[k][1]}'
