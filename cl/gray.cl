/*
** gray.cl — colour to gray, the first stage of every binarization.
** rule 0: BT.601 luma (299 r + 587 g + 114 b + 500) / 1000; rule 1: Qt's (11 r + 16 g + 5 b) / 32.
** Exact integer arithmetic, so every device gives the same gray image.
*/
kernel void gray_convert(global const uchar *in, global uchar *out, ulong n, int channels, int rule)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    if (channels == 1) {
        out[i] = in[i];
        return;
    }
    uint r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
    out[i] = rule == 0 ? (uchar)((299 * r + 587 * g + 114 * b + 500) / 1000)
                       : (uchar)((11 * r + 16 * g + 5 * b) / 32);
}
