/* serializer/omread.c - named questions on a validated gearom.Model
 * (omread.h). */
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
