/*
** pack.cl — a binary result packed eight pixels a byte before it leaves the
** GPU: the first pixel in the most significant bit, a bit set where the pixel
** is white (128 or more), the padding bits 0, as a db_bitmap holds it. One
** work-item a byte; an eighth of the bytes then cross the bus.
*/
kernel void pack_bits(global const uchar *in, int width, int height, int row_bytes, global uchar *out)
{
    int b = get_global_id(0), y = get_global_id(1);
    if (b >= row_bytes || y >= height)
        return;
    global const uchar *p = in + (size_t)y * width + 8 * b;
    int n = min(8, width - 8 * b);
    uint v = 0;
    for (int j = 0; j < 8; j++)
        v = v << 1 | (j < n && p[j] >= 128);
    out[(size_t)y * row_bytes + b] = (uchar)v;
}
