/* serializer/omread.c - named questions on a validated gearom.Model
 * (omread.h). */
#include <stdlib.h>
#include <string.h>

#include "omread.h"

const Gearom__Attribute *om_attr(const Gearom__Node *n, const char *name)
{
	for (size_t k = 0; k < n->n_attrs; k++)
		if (n->attrs[k]->name && !strcmp(n->attrs[k]->name, name))
			return n->attrs[k];
	return NULL;
}

const char *om_attr_cstr(const Gearom__Attribute *a, char *buf, size_t len)
{
	size_t l = !a ? 0 : a->s.len < len ? a->s.len : len - 1;
	if (l)
		memcpy(buf, a->s.data, l);
	buf[l] = 0;
	return buf;
}

const char *om_partition_kind(const Gearom__Node *n, char *buf, size_t len)
{
	const Gearom__Attribute *k = om_attr(n, PARTITION_ATTR);
	if (op_lookup(n->domain, n->op_type) != OP_PartitionedCall || !k)
		return NULL;
	return om_attr_cstr(k, buf, len);
}

const char *om_option(const Gearom__Model *m, const char *key)
{
	for (size_t i = 0; i < m->n_options; i++)
		if (m->options[i]->key && !strcmp(m->options[i]->key, key))
			return m->options[i]->value;
	return NULL;
}

int32_t *om_graph_gears(const Gearom__Model *m)
{
	int32_t *branch = xmalloc((m->n_graphs + 1) * sizeof(int32_t));
	int32_t *own = xmalloc((m->n_graphs + 1) * sizeof(int32_t));
	for (size_t gi = 0; gi < m->n_graphs; gi++)
		branch[gi] = -1;
	for (size_t g = m->n_gears; g-- > 0;) /* the first gear wins */
		if (m->gears[g]->graph >= 0)
			branch[m->gears[g]->graph] = (int32_t)g;
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		int32_t p = (int32_t)gi; /* om_open bounded the nesting */
		while (p >= 0 && branch[p] < 0)
			p = m->graphs[p]->parent;
		own[gi] = p >= 0 ? branch[p] : -1;
	}
	free(branch);
	return own;
}
