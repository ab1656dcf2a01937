<?php
/**
 * Cli: the `wp ramjet` command.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Purges ramjet's cache from WP-CLI.
 */
class Cli {

	/**
	 * Purge collector.
	 *
	 * @var Purge
	 */
	private $purge;

	/**
	 * Tags.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * The command, purging through $purge.
	 *
	 * @param Purge $purge Purge collector.
	 * @param Tags  $tags  Tags.
	 */
	public function __construct( Purge $purge, Tags $tags ) {
		$this->purge = $purge;
		$this->tags  = $tags;
	}

	/**
	 * Purges cached pages now, through ramjet's admin API.
	 *
	 * ## OPTIONS
	 *
	 * [--all]
	 * : Every page of this site.
	 *
	 * [--post=<id>]
	 * : A post and every page that lists it (comma-separated ids).
	 *
	 * [--tag=<tag>]
	 * : Raw cache tags (comma-separated).
	 *
	 * [--url=<url>]
	 * : Absolute URLs (comma-separated).
	 *
	 * ## EXAMPLES
	 *
	 *     wp ramjet purge --post=42
	 *     wp ramjet purge --all
	 *
	 * @param array $args       Positional arguments.
	 * @param array $assoc_args Options.
	 */
	public function purge( $args, $assoc_args ) {
		if ( ! empty( $assoc_args['all'] ) ) {
			$this->purge->add_tags( array( $this->tags->site() ) );
		}
		foreach ( self::split( $assoc_args, 'post' ) as $id ) {
			$post = get_post( (int) $id );
			if ( ! $post ) {
				\WP_CLI::error( sprintf( 'no post %s', $id ) );
			}
			$this->purge->add_tags( $this->tags->for_post_change( $post ) );
		}
		$this->purge->add_tags( self::split( $assoc_args, 'tag' ) );
		foreach ( self::split( $assoc_args, 'url' ) as $url ) {
			$this->purge->add_url( $url );
		}
		if ( ! $this->purge->pending() ) {
			\WP_CLI::error( 'nothing to purge: give --all, --post, --tag or --url' );
		}
		$tags   = $this->purge->tags();
		$urls   = $this->purge->urls();
		$result = $this->purge->deliver_now();
		if ( is_wp_error( $result ) ) {
			\WP_CLI::error( $result->get_error_message() );
		}
		\WP_CLI::success( sprintf( 'purged %d tags, %d urls', count( $tags ), count( $urls ) ) );
	}

	/**
	 * A comma-separated option as a list.
	 *
	 * @param array  $assoc_args Options.
	 * @param string $key        Option.
	 * @return string[]
	 */
	private static function split( $assoc_args, $key ) {
		return isset( $assoc_args[ $key ] ) ? Settings::lines( str_replace( ',', "\n", (string) $assoc_args[ $key ] ) ) : array();
	}
}
