<?php
/**
 * Plugin: builds the plugin's objects for this request and hooks them in.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Wiring only: every object gets its dependencies through its constructor.
 */
class Plugin {

	/**
	 * Main plugin file.
	 *
	 * @var string
	 */
	private $file;

	/**
	 * The plugin whose main file is $file.
	 *
	 * @param string $file Main plugin file.
	 */
	public function __construct( $file ) {
		$this->file = $file;
	}

	/**
	 * Builds the objects and registers their hooks.
	 */
	public function register() {
		$settings = new Settings();
		$request  = Request::current();
		$tags     = new Tags( Tags::site_for( ABSPATH, get_current_blog_id() ) );
		$client   = new AdminClient( $settings );
		$queue    = new Queue( Settings::QUEUE_OPTION, $tags->site() );
		$purge    = new Purge( $client, $queue, $request->behind_proxy( $settings->get( 'proxy' ) ) );
		$esi      = new Esi( $settings, $tags, $request, wp_salt( 'nonce' ) . 'ramjet-esi' );
		$control  = new Control( $settings, $tags, $request, $esi );

		( new Invalidator( $tags, $purge ) )->register();
		$control->register();
		$esi->register();

		if ( ! $request->is_cli() ) {
			header_register_callback( array( $purge, 'deliver_in_header' ) );
		}
		add_action( 'shutdown', array( $purge, 'deliver_now' ), 100 );
		add_action( 'wp_login', array( $purge, 'add_private_all' ) );
		add_action( 'wp_logout', array( $purge, 'add_private_all' ) );

		/**
		 * Purges tags from other code: do_action( 'ramjet_cache_purge', array( 'tag' ) ).
		 */
		add_action( 'ramjet_cache_purge', array( $purge, 'add_tags' ) );
		/**
		 * Purges this blog's cached pages: do_action( 'ramjet_cache_purge_site' ).
		 */
		add_action(
			'ramjet_cache_purge_site',
			static function () use ( $purge, $tags ) {
				$purge->add_tags( array( $tags->site() ) );
			}
		);

		$stats = new SiteStats( $client, (string) wp_parse_url( home_url(), PHP_URL_HOST ) );
		$bar   = new AdminBar( $purge, $tags, $stats );
		$bar->register();
		if ( is_admin() ) {
			( new SettingsPage( $settings, $client, plugin_basename( $this->file ) ) )->register();
			( new StatusWidget( $stats, $bar ) )->register();
		}
		if ( defined( 'WP_CLI' ) && constant( 'WP_CLI' ) && class_exists( 'WP_CLI' ) ) {
			\WP_CLI::add_command( 'ramjet', new Cli( $purge, $tags ) );
		}
	}
}
