// Paths of the management endpoint, shared by the server, the console form and the CLI client.

/** Path of the modify-instance-metadata-options operation. */
export const MODIFY_PATH = '/modify-instance-metadata-options';
