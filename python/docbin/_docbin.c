/*
** _docbin.c — the extension under the docbin package: the public C API
** (docbin.h) for Python. Arrays come in through the buffer protocol, so any
** object with 8-bit pixels works and no numpy header is needed; __init__.py
** checks dtypes and shapes first and gives the friendlier errors. The GIL is
** released while a run or an evaluation works, so threads overlap; runs on
** one context take turns inside the library (docbin.h, "Threads").
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>
#include "docbin.h"

static PyObject *error_type, *device_error_type;

/* Raises the exception of a failed call's status, with the library's message. */
static PyObject *raise_status(db_status st)
{
    PyObject *type = PyExc_RuntimeError;
    switch (st) {
    case DB_ERR_USAGE:
    case DB_ERR_FORMAT:
        type = PyExc_ValueError;
        break;
    case DB_ERR_IO:
        type = PyExc_OSError;
        break;
    case DB_ERR_NOMEM:
        type = PyExc_MemoryError;
        break;
    case DB_ERR_DEVICE:
    case DB_ERR_CL:
        type = device_error_type;
        break;
    case DB_OK:
        break;
    }
    PyErr_SetString(type, db_error_message());
    return NULL;
}

/* ---- arrays -------------------------------------------------------------------- */

/* An array seen as a db_image: its own memory when its rows hold packed
** pixels, else a packed copy (any strides, negative ones included). */
typedef struct image_view {
    Py_buffer view;
    int have_view;
    void *copy;
} image_view;

static void image_view_release(image_view *v)
{
    if (v->have_view)
        PyBuffer_Release(&v->view);
    free(v->copy);
    memset(v, 0, sizeof *v);
}

/* Whether dimension d of the view steps by `step` bytes (any step for an extent of 1). */
static int steps(const Py_buffer *b, int d, Py_ssize_t step)
{
    return b->shape[d] == 1 || b->strides[d] == step;
}

static int image_view_get(PyObject *obj, int writable, const char *what, image_view *v, db_image *img)
{
    memset(v, 0, sizeof *v);
    if (PyObject_GetBuffer(obj, &v->view, writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO) < 0)
        return -1;
    v->have_view = 1;
    Py_buffer *b = &v->view;
    if (b->itemsize != 1 || (b->format && strcmp(b->format, "B") && strcmp(b->format, "=B") && strcmp(b->format, "<B"))) {
        PyErr_Format(PyExc_TypeError, "%s must hold uint8 pixels, not items of format '%s'", what,
                     b->format ? b->format : "?");
        goto fail;
    }
    int channels = b->ndim == 3 ? (int)b->shape[2] : 1;
    if ((b->ndim != 2 && b->ndim != 3) || (channels != 1 && channels != 3)) {
        PyErr_Format(PyExc_ValueError, "%s must be gray (H, W) or RGB (H, W, 3)", what);
        goto fail;
    }
    if (b->shape[0] < 1 || b->shape[1] < 1 || b->shape[0] > INT32_MAX || b->shape[1] > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s is %zdx%zd; give at least one pixel, at most 2^31 - 1 a side", what,
                     b->shape[0], b->shape[1]);
        goto fail;
    }
    size_t row = (size_t)b->shape[1] * (size_t)channels;
    int packed = steps(b, 1, channels) && (b->ndim == 2 || steps(b, 2, 1)) &&
                 (b->shape[0] == 1 || (b->strides[0] > 0 && (size_t)b->strides[0] >= row));
    *img = (db_image){.width = (int)b->shape[1], .height = (int)b->shape[0], .channels = channels,
                      .stride = b->shape[0] == 1 ? row : (size_t)b->strides[0], .data = b->buf};
    if (packed)
        return 0;
    if (writable) {
        PyErr_Format(PyExc_ValueError, "%s must have rows of packed pixels; pass a C-contiguous array", what);
        goto fail;
    }
    if (!(v->copy = malloc(row * (size_t)b->shape[0]))) {
        PyErr_NoMemory();
        goto fail;
    }
    if (PyBuffer_ToContiguous(v->copy, b, (Py_ssize_t)(row * (size_t)b->shape[0]), 'C') < 0)
        goto fail;
    img->stride = row;
    img->data = v->copy;
    return 0;
fail:
    image_view_release(v);
    return -1;
}

/* ---- methods from Python settings ------------------------------------------------ */

/* A method of `algo` with the (name, value) string pairs of `settings` applied. */
static db_method *method_from(const char *algo, PyObject *settings)
{
    db_method *m = NULL;
    db_status st = db_method_new(algo, NULL, &m);
    if (st != DB_OK)
        return raise_status(st), NULL;
    PyObject *seq = PySequence_Fast(settings, "settings must be a sequence of (name, value) pairs");
    if (!seq) {
        db_method_free(m);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        const char *name, *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ss", &name, &value) ||
            ((st = db_method_set(m, name, value)) != DB_OK && !raise_status(st))) {
            Py_DECREF(seq);
            db_method_free(m);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return m;
}

/* ---- Context ----------------------------------------------------------------------- */

typedef struct context_object {
    PyObject_HEAD
    db_context *ctx;
    int busy; /* calls in progress with the GIL released: close() waits for none */
} context_object;

static int context_init(context_object *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"cpu_device", "gpu_device", NULL};
    const char *cpu = NULL, *gpu = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zz", keywords, &cpu, &gpu))
        return -1;
    if (self->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "the context is open already");
        return -1;
    }
    db_status st;
    db_context *ctx = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = db_context_open(cpu, gpu, &ctx);
    Py_END_ALLOW_THREADS
    if (st != DB_OK)
        return raise_status(st), -1;
    self->ctx = ctx;
    return 0;
}

static void context_dealloc(context_object *self)
{
    db_context_close(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int context_usable(context_object *self)
{
    if (self->ctx)
        return 1;
    PyErr_SetString(PyExc_ValueError, "the context is closed; open a new docbin.Context()");
    return 0;
}

/* The time dict of a run. */
static PyObject *times_dict(const db_times *t)
{
    PyObject *stages = PyList_New(t->n_stages);
    if (!stages)
        return NULL;
    for (int s = 0; s < t->n_stages; s++) {
        PyObject *d = Py_BuildValue("{s:s,s:s,s:d}", "stage", t->stages[s].stage, "role",
                                    t->stages[s].role == DB_ROLE_CPU ? "cpu" : "gpu", "ms", t->stages[s].ms);
        if (!d) {
            Py_DECREF(stages);
            return NULL;
        }
        PyList_SET_ITEM(stages, s, d);
    }
    return Py_BuildValue("{s:s,s:s,s:d,s:N,s:d,s:K}", "map", t->map, "chosen_by", t->chosen_by, "wall_ms",
                         t->wall_ms, "stages", stages, "copy_ms", t->copy_ms, "copy_bytes",
                         (unsigned long long)t->copy_bytes);
}

static PyObject *context_run(context_object *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"image", "out", "algo", "settings", "map", "times", NULL};
    PyObject *image, *out, *settings;
    const char *algo, *map = NULL;
    int want_times = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOsO|zp", keywords, &image, &out, &algo, &settings, &map,
                                     &want_times) ||
        !context_usable(self))
        return NULL;
    db_method *m = method_from(algo, settings);
    if (!m)
        return NULL;
    image_view in_view, out_view;
    db_image in, result;
    if (image_view_get(image, 0, "image", &in_view, &in) < 0) {
        db_method_free(m);
        return NULL;
    }
    if (image_view_get(out, 1, "out", &out_view, &result) < 0) {
        image_view_release(&in_view);
        db_method_free(m);
        return NULL;
    }
    db_times times;
    db_status st;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    st = db_method_run(self->ctx, m, map, &in, &result, want_times ? &times : NULL);
    Py_END_ALLOW_THREADS
    self->busy--;
    image_view_release(&out_view);
    image_view_release(&in_view);
    db_method_free(m);
    if (st != DB_OK)
        return raise_status(st);
    if (want_times)
        return times_dict(&times);
    Py_RETURN_NONE;
}

static PyObject *context_run_files(context_object *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"inputs", "out_dir", "algo", "settings", "map", "format", NULL};
    PyObject *inputs, *settings;
    const char *out_dir, *algo, *map = NULL, *format = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OssO|zz", keywords, &inputs, &out_dir, &algo, &settings, &map,
                                     &format) ||
        !context_usable(self))
        return NULL;
    PyObject *seq = PySequence_Fast(inputs, "inputs must be a sequence of paths");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **paths = calloc(n ? (size_t)n : 1, sizeof *paths);
    if (!paths) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(paths[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
            free(paths);
            Py_DECREF(seq);
            return NULL;
        }
    db_method *m = method_from(algo, settings);
    db_status st = DB_OK;
    if (m) {
        if (n > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "too many inputs; give a directory or an @LIST file");
        } else {
            self->busy++;
            Py_BEGIN_ALLOW_THREADS
            st = db_method_run_files(self->ctx, m, map, paths, (int)n, out_dir, format, NULL);
            Py_END_ALLOW_THREADS
            self->busy--;
        }
    }
    db_method_free(m);
    free(paths);
    Py_DECREF(seq);
    if (PyErr_Occurred())
        return NULL;
    if (st != DB_OK)
        return raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *context_devices(context_object *self, PyObject *unused)
{
    (void)unused;
    if (!context_usable(self))
        return NULL;
    int n = db_device_count(self->ctx);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        db_device_desc d;
        db_status st = db_device_describe(self->ctx, i, &d);
        if (st != DB_OK) {
            Py_DECREF(list);
            return raise_status(st);
        }
        char spec[32];
        snprintf(spec, sizeof spec, "%d:%d", d.platform_index, d.device_index);
        PyObject *item = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:i,s:K,s:[]}", "spec", spec, "platform", d.platform,
                                       "name", d.name, "type", d.type, "driver", d.driver, "compute_units",
                                       d.compute_units, "memory", (unsigned long long)d.memory, "roles");
        PyObject *roles = item ? PyDict_GetItemString(item, "roles") : NULL;
        for (int r = 0; roles && r < DB_ROLE_COUNT; r++)
            if (d.roles & (1u << r)) {
                PyObject *name = PyUnicode_FromString(r == DB_ROLE_CPU ? "cpu" : "gpu");
                if (!name || PyList_Append(roles, name) < 0)
                    roles = NULL;
                Py_XDECREF(name);
            }
        if (!roles) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *context_close(context_object *self, PyObject *unused)
{
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the context is running on another thread; close it once its runs end");
        return NULL;
    }
    db_context *ctx = self->ctx;
    self->ctx = NULL;
    Py_BEGIN_ALLOW_THREADS
    db_context_close(ctx);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef context_methods[] = {
    {"run", (PyCFunction)(void (*)(void))context_run, METH_VARARGS | METH_KEYWORDS,
     "run(image, out, algo, settings, map=None, times=False): one page into `out`"},
    {"run_files", (PyCFunction)(void (*)(void))context_run_files, METH_VARARGS | METH_KEYWORDS,
     "run_files(inputs, out_dir, algo, settings, map=None, format=None): a batch of files"},
    {"devices", (PyCFunction)context_devices, METH_NOARGS, "the OpenCL devices and the roles bound to them"},
    {"close", (PyCFunction)context_close, METH_NOARGS, "release the devices now"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject context_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "docbin._docbin.Context",
    .tp_basicsize = sizeof(context_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Context(cpu_device=None, gpu_device=None): the bound OpenCL devices",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)context_init,
    .tp_dealloc = (destructor)context_dealloc,
    .tp_methods = context_methods,
};

/* ---- module functions ---------------------------------------------------------------- */

/* A parameter's default, or one of its choices, as a Python value of its kind. */
static PyObject *param_value(db_value_kind kind, const char *text)
{
    if (kind == DB_VALUE_WORD)
        return PyUnicode_FromString(text);
    double v = strtod(text, NULL);
    return kind == DB_VALUE_REAL ? PyFloat_FromDouble(v) : PyLong_FromDouble(v);
}

static PyObject *param_dict(const db_param_desc *p)
{
    static const char *const kinds[] = {[DB_VALUE_REAL] = "real", [DB_VALUE_INT] = "int",
                                        [DB_VALUE_ODD_INT] = "odd int", [DB_VALUE_WORD] = "word"};
    PyObject *choices = Py_None;
    Py_INCREF(choices);
    if (p->choices) {
        Py_DECREF(choices);
        if (!(choices = PyList_New(0)))
            return NULL;
        char word[64];
        for (const char *s = p->choices; *s;) {
            size_t len = strcspn(s, " ");
            snprintf(word, sizeof word, "%.*s", (int)len, s);
            PyObject *v = param_value(p->kind, word);
            if (!v || PyList_Append(choices, v) < 0) {
                Py_XDECREF(v);
                Py_DECREF(choices);
                return NULL;
            }
            Py_DECREF(v);
            s += len + (s[len] == ' ');
        }
    }
    PyObject *def = param_value(p->kind, p->def);
    if (!def) {
        Py_DECREF(choices);
        return NULL;
    }
    if (p->kind == DB_VALUE_WORD)
        return Py_BuildValue("{s:s,s:s,s:N,s:O,s:O,s:N}", "doc", p->doc, "kind", kinds[p->kind], "default", def,
                             "min", Py_None, "max", Py_None, "choices", choices);
    PyObject *lo = p->kind == DB_VALUE_REAL ? PyFloat_FromDouble(p->min) : PyLong_FromDouble(p->min);
    PyObject *hi = p->kind == DB_VALUE_REAL ? PyFloat_FromDouble(p->max) : PyLong_FromDouble(p->max);
    if (!lo || !hi) {
        Py_XDECREF(lo);
        Py_XDECREF(hi);
        Py_DECREF(def);
        Py_DECREF(choices);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:s,s:N,s:N,s:N,s:N}", "doc", p->doc, "kind", kinds[p->kind], "default", def, "min", lo,
                         "max", hi, "choices", choices);
}

static PyObject *algo_dict(const db_algo_desc *a)
{
    PyObject *stages = PyList_New(a->n_stages), *params = PyDict_New(), *variants = PyList_New(a->n_variants);
    if (!stages || !params || !variants)
        goto fail;
    for (int s = 0; s < a->n_stages; s++) {
        PyObject *t = Py_BuildValue("(ss)", a->stages[s], a->stage_roles[s]);
        if (!t)
            goto fail;
        PyList_SET_ITEM(stages, s, t);
    }
    for (int p = 0; p < a->n_params; p++) {
        PyObject *d = param_dict(&a->params[p]);
        if (!d || PyDict_SetItemString(params, a->params[p].name, d) < 0) {
            Py_XDECREF(d);
            goto fail;
        }
        Py_DECREF(d);
    }
    for (int v = 0; v < a->n_variants; v++) {
        PyObject *s = PyUnicode_FromString(a->variants[v]);
        if (!s)
            goto fail;
        PyList_SET_ITEM(variants, v, s);
    }
    return Py_BuildValue("{s:s,s:s,s:N,s:N,s:N}", "name", a->name, "doc", a->doc, "stages", stages, "params", params,
                         "variants", variants);
fail:
    Py_XDECREF(stages);
    Py_XDECREF(params);
    Py_XDECREF(variants);
    return NULL;
}

static PyObject *module_algorithms(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    int n = db_algo_count();
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        const db_algo_desc *a = db_algo_describe(i);
        PyObject *d = a ? algo_dict(a) : raise_status(DB_ERR_NOMEM);
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

static PyObject *module_evaluate(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *keywords[] = {"gt", "result", "pseudo", NULL};
    PyObject *gt_obj, *result_obj;
    int pseudo = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|p", keywords, &gt_obj, &result_obj, &pseudo))
        return NULL;
    image_view gv, rv;
    db_image gt, result;
    if (image_view_get(gt_obj, 0, "gt", &gv, &gt) < 0)
        return NULL;
    if (image_view_get(result_obj, 0, "result", &rv, &result) < 0) {
        image_view_release(&gv);
        return NULL;
    }
    db_metrics m;
    db_status st;
    Py_BEGIN_ALLOW_THREADS
    st = db_evaluate(&gt, &result, pseudo, &m);
    Py_END_ALLOW_THREADS
    image_view_release(&rv);
    image_view_release(&gv);
    if (st != DB_OK)
        return raise_status(st);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:L,s:L,s:L,s:L,s:K}", "fmeasure",
                         m.fmeasure, "precision", m.precision, "recall", m.recall, "pseudo_fmeasure",
                         m.pseudo_fmeasure, "pseudo_precision", m.pseudo_precision, "pseudo_recall", m.pseudo_recall,
                         "psnr", m.psnr, "drd", m.drd, "nrm", m.nrm, "mcc", m.mcc, "accuracy", m.accuracy, "tp",
                         (long long)m.counts.tp, "tn", (long long)m.counts.tn, "fp", (long long)m.counts.fp, "fn",
                         (long long)m.counts.fn, "nubn", (long long)m.nubn, "drd_sum",
                         (unsigned long long)m.drd_sum);
}

static PyObject *module_version(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyUnicode_FromString(db_version());
}

static PyMethodDef module_methods[] = {
    {"algorithms", module_algorithms, METH_NOARGS, "every algorithm with its stages, parameters and variants"},
    {"evaluate", (PyCFunction)(void (*)(void))module_evaluate, METH_VARARGS | METH_KEYWORDS,
     "evaluate(gt, result, pseudo=True): the DIBCO metrics"},
    {"version", module_version, METH_NOARGS, "the library's version"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "docbin._docbin", .m_doc = "the C API of libdocbin (use the docbin package)",
    .m_size = -1, .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__docbin(void)
{
    if (PyType_Ready(&context_type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    error_type = PyErr_NewExceptionWithDoc("docbin.Error", "a docbin failure that is not a bad argument", NULL, NULL);
    device_error_type = error_type ? PyErr_NewExceptionWithDoc("docbin.DeviceError",
                                                               "no device for a role, or an OpenCL failure",
                                                               error_type, NULL)
                                   : NULL;
    Py_INCREF(&context_type);
    if (!device_error_type || PyModule_AddObject(module, "Context", (PyObject *)&context_type) < 0 ||
        PyModule_AddObjectRef(module, "Error", error_type) < 0 ||
        PyModule_AddObjectRef(module, "DeviceError", device_error_type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
