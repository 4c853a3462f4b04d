/* SPDX-License-Identifier: MIT */
/*
 * A fork child's inherited heap. The parent's writer was held still at
 * the fork (park.h) but had not applied everything its threads pushed:
 * those events are in the child's copy of the rings, and applied here to
 * the child's copy of the live table, so the child knows every block it
 * inherited, up to the fork's own instant.
 */
#ifndef CG_INHERIT_H
#define CG_INHERIT_H

/*
 * In the fork child, with no other thread: the rings' pending
 * allocations and frees go into the live table in time order, and the
 * rings are left empty (what other events carry stays unfreed: the parent's
 * writer may have freed it already). Events the
 * writer had applied already may come again: applying an event a second
 * time leaves the table as it was, as the last event for an address
 * decides its entry.
 */
void cg_inherit_pending(void);

#endif
