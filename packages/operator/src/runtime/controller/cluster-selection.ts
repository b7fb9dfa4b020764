/**
 * Which clusters a controller runs in, or a watch watches (a manager with a fleet): the
 * manager's own ('local', the default), every engaged member cluster ('members'), both
 * ('all'), or the members a function picks by name.
 */
export type ClusterSelection = 'local' | 'members' | 'all' | ((cluster: string) => boolean);

/** Whether `selection` takes the member cluster `name`. */
export function selectsMember(selection: ClusterSelection | undefined, name: string): boolean {
  if (selection === 'members' || selection === 'all') return true;
  if (selection === undefined || selection === 'local') return false;
  return selection(name);
}

/** Whether `selection` takes the manager's own cluster, named `local`. */
export function selectsLocal(selection: ClusterSelection | undefined, local: string): boolean {
  if (selection === undefined || selection === 'local' || selection === 'all') return true;
  if (selection === 'members') return false;
  return selection(local);
}
